// v03 mma_swizzled: v02 with XOR-swizzled shared memory instead of padded rows.
// Adds over v02: chunk c of row r is stored at chunk c ^ swizzle(r) (A rows of 4 chunks:
// swizzle = (r >> 1) & 3; B rows of 16 chunks: r & 7), so both the ldmatrix reads (8 rows, one
// logical chunk) and the 16-byte stores (8 consecutive chunks) hit 8 distinct bank groups: no
// conflicts on either side, where padding left the A stores 2-way conflicted, and no padding
// bytes (16 KiB instead of 19 KiB per stage: it matters once v04 keeps 3-4 stages resident).
// The swizzle term depends only on the lane (tiles start on 8-row boundaries), so it is computed
// once per thread; in the loop an ldmatrix address is a register plus a constant, as in v02.
// Tiles: block 128x128x32, 4 warps (2x2) of 64x64, 16 KiB shared memory.
// Expected bottleneck: as v02, latency of the synchronous loads; a small gain at most from
// the conflict-free stores (expected in ncu: shared store bank conflicts ~0, v02 has some on A).
// Requirements: sm_80+. Any m, n, k: 16-byte chunk copies with zero-filled edges when
// k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned; element-wise copies otherwise.
#include "kernels/hgemm/rung.cuh"
#include "kernels/hgemm/tile_sm80.cuh"

namespace klab::hgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
constexpr int kWarpM = 64, kWarpN = 64;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;

using LayoutA = SwizzledLayout<kBlockM, kBlockK>;  // (BM, BK) of A
using LayoutB = SwizzledLayout<kBlockK, kBlockN>;  // (BK, BN) of B

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) hgemm_v03_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                                             T* __restrict__ c, int m, int n, int k) {
  __shared__ alignas(128) T sA[LayoutA::kElems];
  __shared__ alignas(128) T sB[LayoutB::kElems];
  constexpr Copy kCopy = kVec ? Copy::sync16 : Copy::scalar;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;

  TileCopier<T, kBlockM, kBlockK, kThreads, LayoutA, false> gA(a, m, k, k, m0, 0, tid);
  TileCopier<T, kBlockK, kBlockN, kThreads, LayoutB, true> gB(b, k, n, n, 0, n0, tid);
  WarpTile<T, kWarpM, kWarpN> acc;
  acc.zero();
  const LaneFrag fa = LayoutA::lane_frag(lane), fb = LayoutB::lane_frag(lane);
  const uint32_t sA_addr = device::smem_addr(sA), sB_addr = device::smem_addr(sB);

  const int k_tiles = (k - 1) / kBlockK + 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    gA.template copy<kCopy>(sA);
    gB.template copy<kCopy>(sB);
    __syncthreads();
    acc.template mma_tile<kBlockK, LayoutA, LayoutB>(sA_addr, sB_addr, fa, fb, warp_m * kWarpM,
                                                     warp_n * kWarpN / kChunk);
    __syncthreads();
    gA.advance();
    gB.advance();
  }
  acc.template store<kVec>(c, m, n, m0 + warp_m * kWarpM, n0 + warp_n * kWarpN, lane);
}

template <class T>
void launch(const GemmArgs<T>& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(device::ceil_div(g.n, kBlockN)),
                  static_cast<unsigned>(device::ceil_div(g.m, kBlockM)));
  if (g.vec16())
    hgemm_v03_kernel<T, true><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  else
    hgemm_v03_kernel<T, false><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v03_mma_swizzled() {
  Variant v = gpu_variant("v03_mma_swizzled", "v02 with XOR-swizzled smem: conflict-free ldmatrix and stores, no padding",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) { launch(g, stream_of(args)); });
                          });
  v.can_implement = [](const Problem& p) { return fits_grid_y(p, kBlockM); };
  return v;
}

}  // namespace klab::hgemm

// v02 mma_ldmatrix: the tensor cores through PTX: mma.sync.aligned.m16n8k16.row.col (bf16/f16
// in, f32 accumulate) fed by ldmatrix.x4 (A) and ldmatrix.x4.trans (B, row-major [k][n] tile ->
// the "col" fragment), from row-padded shared memory.
// Adds over v01: the fragment layout is ours, not WMMA's opaque one: one ldmatrix.x4 loads a
// whole 16x16 A fragment (or two 16x8 B fragments), a 64x64 warp tile (4x8 m16n8 tiles, 128
// fp32 accumulators per thread) gives 32 HMMA per 8 LDSM, and the epilogue writes straight
// from registers (no shared-memory round trip).
// Tiles: block 128x128x32, 4 warps (2x2) of 64x64; shared memory 19 KiB (rows padded by 16 B
// so that the 8 rows of an ldmatrix phase hit 8 different bank groups).
// Expected bottleneck: latency. Loads are synchronous (LDG -> STS -> barrier -> mma -> barrier):
// nothing overlaps the global loads but the other resident block's work (2 blocks per SM).
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
constexpr int kPad = 8;

using LayoutA = PaddedLayout<kBlockM, kBlockK, kPad>;  // (BM, BK) of A
using LayoutB = PaddedLayout<kBlockK, kBlockN, kPad>;  // (BK, BN) of B

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) hgemm_v02_kernel(const T* __restrict__ a, const T* __restrict__ b,
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
    hgemm_v02_kernel<T, true><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  else
    hgemm_v02_kernel<T, false><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v02_mma_ldmatrix() {
  Variant v = gpu_variant("v02_mma_ldmatrix", "mma.sync m16n8k16 via PTX + ldmatrix.x4, padded smem, 64x64 warp tile",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) { launch(g, stream_of(args)); });
                          });
  v.can_implement = [](const Problem& p) { return fits_grid_y(p, kBlockM); };
  return v;
}

}  // namespace klab::hgemm

// v04 mma_cp_async: a kStages-deep cp.async pipeline, a bigger block tile and grouped rasterization.
// Adds over v03:
// - cp.async.cg 16-byte copies global -> shared with no register staging, kStages = 4 tiles in
//   flight: while the warps run the mma of tile kt, tiles kt+1..kt+3 are landing. One barrier per
//   tile (cp.async.wait_group kStages-2, then __syncthreads, then refill the slot read last time).
//   Out-of-bounds chunks are zero-filled by cp.async itself (src-size 0).
// - fragments double-buffered in registers: the ldmatrix of step ks+1 (or of the next tile's
//   first step) is issued before the mma of step ks, so shared-memory latency and the barrier
//   hide behind tensor work instead of stalling it.
// - block 128x256x32 with 8 warps (2x4) of 64x64: 128x256 outputs per 24 KiB stage (the A+B
//   bytes per flop drop by 1.33x vs 128x128), 96 KiB of shared memory for 4 stages, one block
//   per SM (~230 registers x 256 threads).
// - grouped rasterization: blocks walk 8 tile-rows down a column band before moving right, so
//   the blocks running together share A and B panels in L2 (4096^3: A+B = 64 MiB > 60 MiB L2).
// Expected bottleneck: the tensor pipe's issue rate for mma.sync (Hopper runs the legacy HMMA
// path well below its wgmma peak), then shared-memory bandwidth of the ldmatrix traffic
// (8 LDSM.x4 per 32 HMMA); target >= 60% of cuBLAS bf16 (which uses wgmma) at 4096^3.
// Requirements: sm_80+, 96 KiB dynamic shared memory. Any m, n, k: the cp.async path needs
// k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; otherwise the same pipeline copies
// element by element through registers (correct, but nothing is in flight: slow).
#include "kernels/hgemm/rung.cuh"
#include "kernels/hgemm/tile_sm80.cuh"

namespace klab::hgemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 32, kStages = 4;
constexpr int kWarpM = 64, kWarpN = 64;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kGroupM = 8;  // tile-rows per rasterization group

using LayoutA = SwizzledLayout<kBlockM, kBlockK>;  // (BM, BK) of A, per stage
using LayoutB = SwizzledLayout<kBlockK, kBlockN>;  // (BK, BN) of B, per stage
template <class T>
constexpr int kSmemBytes = kStages*(LayoutA::kElems + LayoutB::kElems) *
                           static_cast<int>(sizeof(T));

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads, 1)
    hgemm_v04_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m,
                     int n, int k) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* sA = reinterpret_cast<T*>(smem);      // kStages x (BM, BK)
  T* sB = sA + kStages * LayoutA::kElems;  // kStages x (BK, BN)
  constexpr Copy kCopy = kVec ? Copy::async16 : Copy::scalar;
  constexpr uint32_t kStageBytesA = LayoutA::kElems * sizeof(T),
                     kStageBytesB = LayoutB::kElems * sizeof(T);

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const auto [tm, tn] = device::grouped_tile_order<int>(blockIdx.x, kGroupM, (m - 1) / kBlockM + 1,
                                                        (n - 1) / kBlockN + 1);
  const int m0 = tm * kBlockM, n0 = tn * kBlockN;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;

  TileCopier<T, kBlockM, kBlockK, kThreads, LayoutA, false> gA(a, m, k, k, m0, 0, tid);
  TileCopier<T, kBlockK, kBlockN, kThreads, LayoutB, true> gB(b, k, n, n, 0, n0, tid);
  WarpTile<T, kWarpM, kWarpN> acc;
  acc.zero();
  const LaneFrag fa = LayoutA::lane_frag(lane), fb = LayoutB::lane_frag(lane);
  const uint32_t sA_addr = device::smem_addr(sA), sB_addr = device::smem_addr(sB);
  const int k_tiles = (k - 1) / kBlockK + 1;

  // Prologue: tiles 0 .. kStages-2 in flight, one commit group each (empty past the last tile,
  // so that group counting stays uniform).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) {
      gA.template copy<kCopy>(sA + s * LayoutA::kElems);
      gB.template copy<kCopy>(sB + s * LayoutB::kElems);
      gA.advance();
      gB.advance();
    }
    device::cp_async_commit();
  }

  // Main loop, software-pipelined at two levels (the CUTLASS sm80 multistage schedule):
  // shared memory holds kStages tiles, registers hold two 16-deep steps of fragments. Step ks
  // first loads the fragments of step ks+1 (of the next tile when ks is the last step, after the
  // barrier that makes that tile visible), then runs its own mma, so ldmatrix latency hides
  // behind tensor work, and the one barrier per tile sits where the next HMMAs are already ready.
  // The refill of the slot tile kt-1 used is issued at step 0 of tile kt: every warp has passed
  // the barrier after its last ldmatrix of tile kt-1 (the fragments of the last step are loaded
  // one step early).
  using Warp = WarpTile<T, kWarpM, kWarpN>;
  constexpr int kSteps = kBlockK / 16;
  const int row0 = warp_m * kWarpM, chunk0 = warp_n * kWarpN / kChunk;
  typename Warp::Frags frags[2];
  int read = 0, write = kStages - 1;
  device::cp_async_wait<kStages - 2>();
  __syncthreads();
  Warp::template load_frags<LayoutA, LayoutB>(frags[0], sA_addr, sB_addr, fa, fb, row0, chunk0, 0);

  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks == kSteps - 1) {
        device::cp_async_wait<kStages - 2>();  // this thread's copies of tile kt+1 have landed...
        __syncthreads();  // ...everyone's have, and nobody reads tile kt's slot any more
        read = read == kStages - 1 ? 0 : read + 1;
      }
      // Past the last tile this reads a stale slot: harmless, the fragments go unused.
      Warp::template load_frags<LayoutA, LayoutB>(
          frags[(ks + 1) % 2], sA_addr + read * kStageBytesA, sB_addr + read * kStageBytesB, fa, fb,
          row0, chunk0, (ks + 1) % kSteps);
      if (ks == 0) {
        if (kt + kStages - 1 < k_tiles) {  // refill the slot tile kt-1 used
          gA.template copy<kCopy>(sA + write * LayoutA::kElems);
          gB.template copy<kCopy>(sB + write * LayoutB::kElems);
          gA.advance();
          gB.advance();
        }
        device::cp_async_commit();
        write = write == kStages - 1 ? 0 : write + 1;
      }
      acc.mma(frags[ks % 2]);
    }
  }
  acc.template store<kVec>(c, m, n, m0 + warp_m * kWarpM, n0 + warp_n * kWarpN, lane);
}

template <class T, bool kVec>
void launch_kernel(const GemmArgs<T>& g, cudaStream_t stream) {
  // Above 48 KiB of dynamic shared memory needs an opt-in, once per kernel.
  static const bool opted_in = [] {
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(
        hgemm_v04_kernel<T, kVec>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<T>));
    return true;
  }();
  (void)opted_in;
  const auto blocks = device::ceil_div(g.m, kBlockM) * device::ceil_div(g.n, kBlockN);
  hgemm_v04_kernel<T, kVec><<<static_cast<unsigned>(blocks), kThreads, kSmemBytes<T>, stream>>>(
      g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

template <class T>
void launch(const GemmArgs<T>& g, cudaStream_t stream) {
  if (g.vec16())
    launch_kernel<T, true>(g, stream);
  else
    launch_kernel<T, false>(g, stream);
}

}  // namespace

Variant gpu_v04_mma_cp_async() {
  Variant v = gpu_variant(
      "v04_mma_cp_async",
      "cp.async 4-stage pipeline, 128x256x32 block, 8 warps of 64x64, grouped raster",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) { launch(g, stream_of(args)); });
      });
  v.can_implement = [](const Problem& p) {
    if (device::ceil_div(p.dim("m"), kBlockM) * device::ceil_div(p.dim("n"), kBlockN) > INT_MAX)
      return Status::no("more than 2^31 - 1 tiles of 128x256");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::hgemm

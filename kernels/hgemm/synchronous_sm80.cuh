#pragma once
// The synchronous mma.sync kernel behind v02 (padded shared memory) and v03 (swizzled): block
// 128 x 128 x 32, 4 warps (2 x 2) of 64 x 64; each k-tile is copied (LDG -> STS), a barrier, the
// warp tiles' ldmatrix + mma.sync, a barrier. The two rungs differ only in the shared layout.
#include "kernels/hgemm/rung.cuh"
#include "kernels/hgemm/tile_sm80.cuh"

namespace klab::hgemm::synchronous {

inline constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
inline constexpr int kWarpM = 64, kWarpN = 64;
inline constexpr int kWarpsN = kBlockN / kWarpN;
inline constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;

/// LayoutA: (kBlockM, kBlockK) of A; LayoutB: (kBlockK, kBlockN) of B.
template <class LayoutA, class LayoutB, class T, bool kVec>
__global__ void __launch_bounds__(kThreads) kernel(const T* __restrict__ a, const T* __restrict__ b,
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

template <class LayoutA, class LayoutB, class T>
void launch(const GemmArgs<T>& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(device::ceil_div(g.n, kBlockN)),
                  static_cast<unsigned>(device::ceil_div(g.m, kBlockM)));
  if (g.vec16())
    kernel<LayoutA, LayoutB, T, true><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  else
    kernel<LayoutA, LayoutB, T, false><<<grid, kThreads, 0, stream>>>(g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::hgemm::synchronous

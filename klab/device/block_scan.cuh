#pragma once
// A block-wide exclusive prefix sum of one int64 a thread: warp shuffles, then the warps' totals
// through shared memory. The decode rungs find a CTA's place in the batch with it (tile_line.cuh's
// line ranges, compact_grid.cuh's items).
#include <cstdint>

namespace klab::device {

/// Thread t's exclusive prefix of `mine` over the CTA's kThreads threads in thread order, and
/// the CTA's total in `total`. s_scan: kThreads / 32 values of shared memory. One __syncthreads
/// inside: every thread calls it, and s_scan is not written again before another barrier.
template <int kThreads>
__device__ __forceinline__ int64_t block_exclusive_scan(int64_t mine, int64_t* s_scan,
                                                        int64_t& total) {
  constexpr int kWarps = kThreads / 32;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  int64_t incl = mine;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const int64_t v = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= off) incl += v;
  }
  if (lane == 31) s_scan[warp] = incl;
  __syncthreads();
  int64_t excl = incl - mine;
  total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    total += s_scan[w];
    if (w < warp) excl += s_scan[w];
  }
  return excl;
}

}  // namespace klab::device

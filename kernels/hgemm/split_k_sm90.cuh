#pragma once
// Split-K's second half for the wgmma rungs (v16, v17): each K split stores its fp32 partial of C
// into its own slice of a workspace (SplitKPlan::workspace_index), and a second kernel sums the
// slices in split order and rounds once: the same bits every run, no atomics.
#include <algorithm>
#include <cstdint>

#include "kernels/hgemm/split_k_plan.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"

namespace klab::hgemm {

/// Stores the warpgroup's 64 x kN fp32 accumulators at (row0, col0) of an m x n row-major slice
/// as 2-float vectors (rows >= m, columns >= n skipped; n even).
template <int kN>
__device__ __forceinline__ void store_wgmma_partial(const float (&acc)[kN / 2],
                                                    float* __restrict__ slice, int m, int n,
                                                    int row0, int col0) {
  const int t = int(threadIdx.x) % 128;
#pragma unroll
  for (int i = 0; i < kN / 2; i += 2) {
    const device::WgmmaAccCoord at = device::wgmma_acc_coord(t, i);
    const int row = row0 + at.row, col = col0 + at.col;
    if (row < m && col < n)
      *reinterpret_cast<float2*>(slice + size_t(row) * size_t(n) + col) =
          make_float2(acc[i], acc[i + 1]);
  }
}

/// C = the sum of the splits' partial slices, in split order, rounded once. Four columns a
/// thread (n % 8 == 0: a row's quads are whole and 16-byte aligned).
template <class T>
__global__ void split_k_reduce_kernel(const float* __restrict__ workspace, T* __restrict__ c, int m,
                                      int n, int splits) {
  const size_t quads = size_t(m) * size_t(n) / 4, slice = size_t(m) * size_t(n);
  for (size_t q = size_t(blockIdx.x) * blockDim.x + threadIdx.x; q < quads;
       q += size_t(gridDim.x) * blockDim.x) {
    float4 sum = reinterpret_cast<const float4*>(workspace)[q];
    for (int s = 1; s < splits; ++s) {
      const float4 v = reinterpret_cast<const float4*>(workspace + size_t(s) * slice)[q];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    const auto lo = round_pair<T>(sum.x, sum.y), hi = round_pair<T>(sum.z, sum.w);
    uint2 out;
    out.x = as_u32(lo);
    out.y = as_u32(hi);
    reinterpret_cast<uint2*>(c)[q] = out;
  }
}

/// Enqueues split_k_reduce_kernel over an m x n C (n % 8 == 0) from `splits` slices: a
/// grid-stride launch of at most 8 blocks of 256 threads an SM.
template <class T>
void launch_split_k_reduce(const float* workspace, T* c, int m, int n, int splits,
                           cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t quads = int64_t(m) * n / 4;
  const auto blocks = std::min<int64_t>(device::ceil_div(quads, kThreads),
                                        int64_t(std::max(1, device_info().sm_count)) * 8);
  split_k_reduce_kernel<T><<<unsigned(blocks), kThreads, 0, stream>>>(workspace, c, m, n, splits);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::hgemm

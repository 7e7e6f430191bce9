#pragma once
// A consumer warpgroup's fp32 accumulators in a workspace slot, for the stream-K rungs that sum
// a split tile's segments (v21, v22, v23): thread t's float4 j at float4 index j * 128 + t, so
// each warp's 32 float4s a step are 512 contiguous bytes and a thread reads back its own.
#include <cuda_runtime.h>

namespace klab::hgemm {

/// Thread t's kN / 2 accumulators into its warpgroup's half of a slot, a float4 a step.
template <int kN>
__device__ __forceinline__ void store_slot(float4* half, const float* acc, int t) {
#pragma unroll
  for (int j = 0; j < kN / 8; ++j)
    __stcg(half + j * 128 + t,
           make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
}

/// A slot half's float4s added to thread t's accumulators (kAssign: copied over them).
template <int kN, bool kAssign = false>
__device__ __forceinline__ void add_slot(float* acc, const float4* half, int t) {
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    const float4 v = __ldcg(half + j * 128 + t);
    if constexpr (kAssign) {
      acc[4 * j] = v.x;
      acc[4 * j + 1] = v.y;
      acc[4 * j + 2] = v.z;
      acc[4 * j + 3] = v.w;
    } else {
      acc[4 * j] += v.x;
      acc[4 * j + 1] += v.y;
      acc[4 * j + 2] += v.z;
      acc[4 * j + 3] += v.w;
    }
  }
}

}  // namespace klab::hgemm

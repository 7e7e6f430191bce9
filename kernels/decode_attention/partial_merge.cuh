#pragma once
// The merge of one row group's split partials by the CTA that arrives last on the group's
// counter (v04, v05, v06): up to GqaMmaConfig::kRows query rows, `parts` partials each (a
// normalised fp32 O of kD elements and its natural-log lse, written by other CTAs: read through
// L2), merged by log-sum-exp in partial order with lse_merge.hpp's weights, so the result has the
// same bits whichever CTA merges.
#include <cuda_bf16.h>

#include <cstdint>

#include "klab/device/lse_merge.hpp"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::decode_attention {

/// Pass 1: a warp per row, the largest lse and the weights' sum (into s_m[r], s_s[r]); pass 2: a
/// float4 of a row per thread, every partial's loads independent (no branch on an empty
/// partial's weight: it is 0 and its O is 0), kUnroll partials a round. lse_at(i, r) is partial
/// i's lse of row r, o_at(i, r, c4) its float4 c4 of O; store(r, c4, o, lse) receives the merged,
/// normalised float4 and the row's lse (-inf and zeros for a row without keys). Threads 0 ..
/// kThreads - 1 call it; sync() is their barrier (one inside).
template <int kD, int kThreads, int kUnroll, class LseAt, class OAt, class Store, class Sync>
__device__ __forceinline__ void merge_partials(int rows, int parts, LseAt&& lse_at, OAt&& o_at,
                                               Store&& store, float* s_m, float* s_s, Sync&& sync) {
  constexpr int kWarps = kThreads / 32, kVec = kD / 4;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  for (int r = warp; r < rows; r += kWarps) {
    float m = -INFINITY;
    for (int i = lane; i < parts; i += 32) m = fmaxf(m, lse_at(i, r));
#pragma unroll
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float s = 0.f;
    for (int i = lane; i < parts; i += 32) s += device::lse_merge_scale(lse_at(i, r), m);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) {
      s_m[r] = m;
      s_s[r] = s;
    }
  }
  sync();
  for (int e = tid; e < rows * kVec; e += kThreads) {
    const int r = e / kVec, c4 = e % kVec;
    const float m = s_m[r], s = s_s[r];
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll kUnroll
    for (int i = 0; i < parts; ++i) {
      const float w = device::lse_merge_scale(lse_at(i, r), m);
      const float4 v = o_at(i, r, c4);
      x.x += w * v.x;
      x.y += w * v.y;
      x.z += w * v.z;
      x.w += w * v.w;
    }
    const float inv = s > 0.f ? 1.f / s : 0.f;
    store(r, c4, make_float4(x.x * inv, x.y * inv, x.z * inv, x.w * inv),
          s > 0.f ? m + logf(s) : -INFINITY);
  }
}

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// A CTA's barrier: all its threads (__syncthreads).
struct CtaSync {
  __device__ void operator()() const { __syncthreads(); }
};

/// Hardware barrier `id` (1..15) of the first kThreads threads: a warp-specialised kernel's
/// math warps while its producer warp runs on.
template <int kThreads>
struct NamedSync {
  int id;
  __device__ void operator()() const { device::named_barrier_sync(id, kThreads); }
};

}  // namespace klab::decode_attention

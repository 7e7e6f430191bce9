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

/// One pass: a float4 of a row per thread, the partials taken kChunk at a time, every load of a
/// chunk (its lse and its O) independent of the others, so that a chunk costs one round trip;
/// the running max is raised chunk by chunk and what was summed under the old one rescaled (the
/// same order of operations whoever merges: the same bits). lse_at(i, r) is partial i's lse of
/// row r, o_at(i, r, c4) its float4 c4 of O; store(r, c4, o, lse) receives the merged,
/// normalised float4 and the row's lse (-inf and zeros for a row without keys). Threads 0 ..
/// kThreads - 1 call it; no barrier.
template <int kD, int kThreads, int kChunk, class LseAt, class OAt, class Store>
__device__ __forceinline__ void merge_partials(int rows, int parts, LseAt&& lse_at, OAt&& o_at,
                                               Store&& store) {
  constexpr int kVec = kD / 4;
  for (int e = static_cast<int>(threadIdx.x); e < rows * kVec; e += kThreads) {
    const int r = e / kVec, c4 = e % kVec;
    float m = -INFINITY, s = 0.f;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int i0 = 0; i0 < parts; i0 += kChunk) {
      float l[kChunk];
      float4 v[kChunk];
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const bool in = i0 + u < parts;
        l[u] = in ? lse_at(i0 + u, r) : -INFINITY;
        v[u] = in ? o_at(i0 + u, r, c4) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
      float mc = m;
#pragma unroll
      for (int u = 0; u < kChunk; ++u) mc = fmaxf(mc, l[u]);
      // What was summed under m, rescaled to mc (0 while nothing was: no exp(-inf - -inf)).
      const float f = device::lse_merge_scale(m, mc);
      s *= f;
      x = make_float4(x.x * f, x.y * f, x.z * f, x.w * f);
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const float w = device::lse_merge_scale(l[u], mc);
        s += w;
        x.x += w * v[u].x;
        x.y += w * v[u].y;
        x.z += w * v[u].z;
        x.w += w * v[u].w;
      }
      m = mc;
    }
    // s >= 1 when a partial is non-empty (the largest contributes exp(0)).
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

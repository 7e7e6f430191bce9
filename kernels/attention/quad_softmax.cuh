#pragma once
// The online softmax of the tensor-core attention rungs (v03 on mma.sync, v04 on wgmma), whose
// accumulator fragments give each query row to a quad of 4 lanes (lanes 4g .. 4g + 3), each lane
// holding some of the row's columns: the row's max and sum are reduced across the quad by
// shuffles. Scores are kept in log2 units: s * scale * log2(e), so that exp2 does the exponential,
// one MUFU.EX2 each (device::ex2_ftz: exp2f's handling of subnormal results would add three
// instructions to every term, on the issue slots the softmax shares with the GEMMs).
#include <cmath>

#include "kernels/attention/lazy_rescale.hpp"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/device/fast_exp.hpp"

namespace klab::attention {

/// x reduced over the 4 lanes of this lane's quad, by max or by sum.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/// One query row's running softmax state in one lane: m the largest scaled score seen by the
/// row (log2 units; -inf while it has seen no visible key), l this lane's share of the row's sum
/// of exp2(score - m).
struct QuadRow {
  float m = -INFINITY, l = 0.f;

  /// A new key block whose raw scores have the maximum mx over the whole row (quad_max): raises
  /// m and returns the factor alpha = exp2(m_old - m_new) that the row's l and O must be
  /// multiplied by (the caller: l = l * alpha + the block's terms). m_use: what the block's
  /// scaled scores subtract (0 while the row has seen no visible key, whose terms are
  /// exp2(-inf) = 0 then).
  __device__ __forceinline__ float rescale(float mx, float scale_log2, float& m_use) {
    const float m_new = fmaxf(m, mx * scale_log2);
    m_use = subtrahend(m_new);
    const float alpha = device::ex2_ftz(m - m_use);
    m = m_new;
    return alpha;
  }

  /// What a block's scaled scores subtract under the running max m: m, or 0 while the row has
  /// seen no visible key (its terms are exp2(-inf) = 0 then).
  __device__ __forceinline__ static float subtrahend(float m) { return m == -INFINITY ? 0.f : m; }

  /// The term of raw score s in the block rescale() was given.
  __device__ __forceinline__ static float term(float s, float scale_log2, float m_use) {
    return device::ex2_ftz(fmaf(s, scale_log2, -m_use));
  }

  /// After the last block: 1 / the row's sum (0 for a row that saw no key, whose O stays 0) and
  /// its log-sum-exp in natural-log units of the scaled scores (-inf for such a row).
  struct Final {
    float inv, lse;
  };
  __device__ __forceinline__ Final finish() const {
    const float sum = quad_sum(l);
    if (sum == 0.f) return {0.f, -INFINITY};
    return {1.f / sum, (m + log2f(sum)) * kLn2};
  }
};

}  // namespace klab::attention

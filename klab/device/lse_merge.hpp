#pragma once
// The merge of attention partials by log-sum-exp (flash-decoding's second step): partial i holds
// O_i, the softmax-weighted mean of V over a disjoint set of keys, and lse_i, the log of its
// weights' sum. The whole is O = sum_i w_i O_i with w_i = exp(lse_i - lse), lse =
// log(sum_i exp(lse_i)). An empty partial (no keys: lse_i = -inf, O_i = 0) weighs nothing; when
// every partial is empty the row is empty: O = 0, lse = -inf, never 0 / 0. The partials are
// summed in index order, so the result has the same bits every run. Host and device: the CPU
// tests check the arithmetic that the split-KV kernels run.
#include <cmath>

#include "klab/device/host_device.hpp"

namespace klab::device {

/// The largest of n partials' lse (-inf when all are empty).
KLAB_HOST_DEVICE inline float lse_merge_max(const float* lse, int n) {
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) m = fmaxf(m, lse[i]);
  return m;
}

/// exp(lse_i - max): partial i's weight relative to the largest, 0 for an empty partial (and no
/// exp(-inf - -inf) = NaN when every partial is empty).
KLAB_HOST_DEVICE inline float lse_merge_scale(float lse_i, float max) {
  return lse_i == -INFINITY ? 0.f : expf(lse_i - max);
}

/// Merges n partials into elements [e0, e1) of one row: out(e, value) receives
/// sum_i w_i o_at(i, e) (0 for an empty row); returns the merged lse (-inf for an empty row).
template <class OAt, class Out>
KLAB_HOST_DEVICE inline float lse_merge_row(const float* lse, int n, int e0, int e1, OAt&& o_at,
                                            Out&& out) {
  const float m = lse_merge_max(lse, n);
  float sum = 0.f;
  for (int i = 0; i < n; ++i) sum += lse_merge_scale(lse[i], m);
  // sum >= 1 when a partial is non-empty (the largest contributes exp(0)).
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  for (int e = e0; e < e1; ++e) {
    float x = 0.f;
    for (int i = 0; i < n; ++i) {
      const float w = lse_merge_scale(lse[i], m);
      if (w > 0.f) x += w * o_at(i, e);
    }
    out(e, x * inv);
  }
  return sum > 0.f ? m + logf(sum) : -INFINITY;
}

/// The merge in its running form (v36's merge kernel: each warp takes some of a row's partials,
/// then the warps' states are joined): the largest lse so far, the sum of the weights relative to
/// it and the weighted kN elements of the row. Empty partials (lse -inf) and empty states change
/// nothing; what it gives equals lse_merge_row's up to fp32 rounding (the weights are rescaled as
/// the maximum grows instead of computed against the final one).
template <int kN>
struct LseMergeState {
  float m = -INFINITY, s = 0.f, acc[kN] = {};

  /// Joins the weighted elements o (kN of them) of a partial, or of a state, whose largest lse is
  /// lse_i and whose weights relative to it sum to s_i (1 for a partial).
  KLAB_HOST_DEVICE void add(float lse_i, float s_i, const float* o) {
    if (lse_i == -INFINITY) return;
    const float m_new = fmaxf(m, lse_i);
    const float up = m == -INFINITY ? 0.f : expf(m - m_new), w = expf(lse_i - m_new);
    s = s * up + s_i * w;
    for (int e = 0; e < kN; ++e) acc[e] = acc[e] * up + w * o[e];
    m = m_new;
  }
  /// The merged lse (-inf for an empty row).
  KLAB_HOST_DEVICE float lse() const { return s > 0.f ? m + logf(s) : -INFINITY; }
  /// The merged element e (0 for an empty row).
  KLAB_HOST_DEVICE float out(int e) const { return s > 0.f ? acc[e] / s : 0.f; }
};

}  // namespace klab::device

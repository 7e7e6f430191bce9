#pragma once
// Online softmax (Milakov & Gimelshein, 2018): the normaliser of a softmax built in one pass. The
// state (max, sum) holds the largest value seen and the sum of exp(x - max) over the values seen;
// a larger value rescales the sum by exp(max_old - max_new). Two states (of disjoint values:
// threads, warps, blocks, KV tiles) merge the same way.
#include <cmath>

namespace klab::device {

/// A partial softmax normaliser: sum over seen x of exp(x - max), with max the largest x seen.
struct MaxSum {
  float max = -INFINITY;
  float sum = 0.f;
};

/// Raises the state's maximum to m when m is larger, rescaling the sum by exp(max - m) (accurate
/// expf: rescales are few). From the empty state the sum stays 0 (0 * exp(-inf) = 0).
__device__ __forceinline__ void online_raise_max(MaxSum& s, float m) {
  if (m > s.max) {
    s.sum *= expf(s.max - m);
    s.max = m;
  }
}

/// Adds one value x; exp(t) computes the terms exp(x - max) (e.g. __expf).
template <class Exp>
__device__ __forceinline__ void online_add(MaxSum& s, float x, Exp&& exp) {
  online_raise_max(s, x);
  s.sum += exp(x - s.max);
}

/// Adds kN values at once: one rescale for the block's maximum, then the block's terms. v[0] must
/// be finite (a present element); missing ones may be -inf (their term is exp(-inf) = 0).
template <int kN, class Exp>
__device__ __forceinline__ void online_add_block(MaxSum& s, const float (&v)[kN], Exp&& exp) {
  float block_max = v[0];
#pragma unroll
  for (int k = 1; k < kN; ++k) block_max = fmaxf(block_max, v[k]);
  online_raise_max(s, block_max);
#pragma unroll
  for (int k = 0; k < kN; ++k) s.sum += exp(v[k] - s.max);
}

/// Merges two partials: both sums are rescaled to the larger maximum. The rescale factors use
/// the accurate expf (they are few); `a.max == m` leaves a sum untouched, which also keeps an
/// empty partial (-inf, 0) from producing exp(-inf - -inf) = NaN.
__device__ __forceinline__ MaxSum online_merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  const float sa = a.max == m ? a.sum : a.sum * expf(a.max - m);
  const float sb = b.max == m ? b.sum : b.sum * expf(b.max - m);
  return {m, sa + sb};
}

}  // namespace klab::device

#pragma once
// A register array reduced by a balanced tree instead of a chain: element j takes element
// j + s at strides s = 1, 2, 4, ... (any N), so the result is ceil(log2 N) operations deep where
// the loop `acc = op(acc, v[j])` is N - 1 deep, with the same N - 1 operations. Under an
// unrolled loop the array stays in registers. The FA3 rungs' softmax takes each row's max this
// way (the same value in any order), so that a key block's first exponential waits on a short
// chain. A sum by the tree rounds pairwise (its error grows with log2 N, not N), but its partial
// sums hold registers longer than a chain's one: the row sums stay chains (attention.md, "The
// sum tree apart"). Host and device: the CPU tests run it.
#include "klab/device/host_device.hpp"

namespace klab::device {

/// op over v[0], ..., v[N - 1] as a tree; v is overwritten (v[0] holds the result).
template <int N, class T, class Op>
KLAB_HOST_DEVICE inline T tree_reduce(T (&v)[N], Op op) {
  static_assert(N >= 1);
  KLAB_UNROLL
  for (int s = 1; s < N; s *= 2) {
    KLAB_UNROLL
    for (int j = 0; j + s < N; j += 2 * s) v[j] = op(v[j], v[j + s]);
  }
  return v[0];
}

/// How many operations deep tree_reduce's result is over N elements: ceil(log2 N).
constexpr int tree_depth(int n) {
  int d = 0;
  for (int w = 1; w < n; w *= 2) ++d;
  return d;
}

}  // namespace klab::device

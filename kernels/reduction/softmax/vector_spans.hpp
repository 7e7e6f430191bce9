#pragma once
// Index arithmetic of softmax v06's vector spans (v06_vector_spans.cu), host-compilable so that
// tests/cpu/test_softmax_spans.cpp checks it on the CPU.
//
// A row of `cols` elements that no 16-byte vector of kN elements divides is not a whole number of
// vectors, but the kN / gcd(cols, kN) rows after it are: a span of S such rows is S * cols / kN
// vectors and starts on a vector boundary whenever the tensor does (its first element's index is
// a multiple of S * cols, hence of kN). A warp owns one span; lane l takes vectors l, l + 32, ...
// (slot j: vector l + 32 j), so slot j of the warp reads 32 contiguous vectors. With cols >= kN a
// vector's elements lie in at most two rows of the span: `row` (its first element's) and row + 1,
// split after its first `split` elements.
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::reduction::spans {

/// Rows of a span: the fewest rows whose elements fill whole vectors of kN (a power of two)
/// elements, kN / gcd(cols, kN); 1 when cols is a multiple of kN.
KLAB_HOST_DEVICE constexpr int span_rows(int64_t cols, int kN) {
  const int64_t low = cols & -cols;  // the largest power of two dividing cols
  return low >= kN ? 1 : static_cast<int>(kN / low);
}

/// Vectors of kN elements in a span of span_rows(cols, kN) rows.
KLAB_HOST_DEVICE constexpr int64_t span_vectors(int64_t cols, int kN) {
  return span_rows(cols, kN) * cols / kN;
}

/// Slots per lane: the span's vectors over 32 lanes, rounded up.
KLAB_HOST_DEVICE constexpr int slots_for(int64_t vectors) {
  return static_cast<int>((vectors + 31) / 32);
}

/// Where vector v of a span lies: its first element's row and how many of its elements are in
/// that row (1..kN); the other kN - split are the start of row + 1. Needs cols >= kN.
struct VectorRows {
  int row;
  int split;
};
KLAB_HOST_DEVICE constexpr VectorRows vector_rows(int v, int cols, int kN) {
  const int e0 = v * kN;
  const int row = e0 / cols;
  const int left = (row + 1) * cols - e0;  // elements of `row` from e0 on
  return {row, left < kN ? left : kN};
}

// The rows slot j can touch, for every cols whose span has S rows and needs exactly J slots (V
// vectors, 32 (J - 1) < V <= 32 J). Vector v's first element is row floor(kN v / cols) =
// floor(S v / V) (kN / cols = S / V exactly) and its last is row ceil(S (v + 1) / V) - 1. Slot
// j's vectors are 32 j .. 32 j + 31, so its rows run from floor(32 S j / V) >= floor(S j / J)
// to at most ceil(S (32 j + 32) / V) - 1 <= ceil(S (32 j + 32) / (32 J - 31)) - 1. Known at
// compile time, these bounds let a lane fold slot j into 2-3 of the S row accumulators instead
// of all S (S = J = 8: rows j and j + 1 only).

/// First row slot j can touch (S rows a span, J slots).
KLAB_HOST_DEVICE constexpr int slot_first_row(int S, int J, int j) { return S * j / J; }

/// Last row slot j can touch (S rows a span, J slots), at most S - 1.
KLAB_HOST_DEVICE constexpr int slot_last_row(int S, int J, int j) {
  const int num = S * (32 * j + 32), den = 32 * J - 31;
  const int last = (num + den - 1) / den - 1;
  return last < S - 1 ? last : S - 1;
}

/// Whether v06's span path takes rows of `cols` elements of kN a vector with at most max_slots
/// slots a lane: rows that are not whole vectors, at least one vector long (so a vector touches
/// at most two rows), and spans of 32 to 32 max_slots vectors (fewer leave lanes idle: v05's
/// groups of lanes hold several rows a warp instead).
KLAB_HOST_DEVICE constexpr bool span_path_applies(int64_t cols, int kN, int max_slots) {
  if (cols % kN == 0 || cols < kN) return false;
  const int64_t v = span_vectors(cols, kN);
  return v >= 32 && v <= 32 * int64_t(max_slots);
}

}  // namespace klab::reduction::spans

#pragma once
// How hgemm's weight-streaming rung (v16) splits K: the grid is (N slabs) x (K splits), every
// CTA resident at once, each streaming one slab's rows of B for a contiguous range of k-tiles;
// with more than one split, every split writes its fp32 partial C into its own slice of a
// workspace, and a second kernel sums the slices in split order (deterministic). Host-and-device
// constexpr: the CPU tests check that the splits cover every k-tile once and that the
// workspace's slices do not overlap.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace klab::hgemm {

struct SplitKPlan {
  int tiles_n = 1;            // N slabs of block_n columns
  int k_tiles = 1;            // k-tiles of block_k
  int splits = 1;             // K ranges (grid y)
  int k_tiles_per_split = 1;  // each range's k-tiles (the last may have fewer, never none)

  /// Split s's k-tiles: [k_begin(s), k_end(s)).
  constexpr int k_begin(int s) const { return s * k_tiles_per_split; }
  constexpr int k_end(int s) const { return std::min(k_tiles, k_begin(s) + k_tiles_per_split); }

  /// The fp32 partials of an m x n product (none with one split: it stores C directly).
  constexpr size_t workspace_floats(int m, int n) const {
    return splits > 1 ? size_t(splits) * size_t(m) * size_t(n) : 0;
  }
  /// Where split s's partial C(row, col) lives in the workspace (row-major slices, split-major).
  static constexpr size_t workspace_index(int s, int row, int col, int m, int n) {
    return (size_t(s) * size_t(m) + size_t(row)) * size_t(n) + size_t(col);
  }
};

/// The splits of an (n, k) weight in block_n x block_k tiles for `slots` resident CTAs: as many
/// as fill one wave (slots / tiles_n: more would queue behind the first and read no faster), but
/// at least min_k_tiles k-tiles each (a split must fill the ring to keep its loads in flight);
/// the split length rounded so that no split is empty.
constexpr SplitKPlan plan_split_k(int64_t n, int64_t k, int block_n, int block_k, int slots,
                                  int min_k_tiles) {
  SplitKPlan p;
  p.tiles_n = int((n + block_n - 1) / block_n);
  p.k_tiles = int((k + block_k - 1) / block_k);
  const int want = std::max(1, slots / p.tiles_n);
  const int most = std::max(1, p.k_tiles / std::max(1, min_k_tiles));
  const int splits = std::min(want, most);
  p.k_tiles_per_split = (p.k_tiles + splits - 1) / splits;
  p.splits = (p.k_tiles + p.k_tiles_per_split - 1) / p.k_tiles_per_split;
  return p;
}

}  // namespace klab::hgemm

#pragma once
// The order in which the tiles of a 2-D tile grid (tiles_m rows x tiles_n columns) are visited:
// grouped rasterisation. Tiles go `group` tile rows at a time (the last group may be shorter),
// down a tile column of the group before the next column, so that the tiles running together
// share a few rows of A and columns of B (GEMM), or of input and output (transpose), in L2.
#include "klab/device/host_device.hpp"

namespace klab::device {

template <class I>
struct TileCoord {
  I m, n;  ///< tile row (0..tiles_m-1), tile column (0..tiles_n-1)
};

/// Tile index `tile` (0 .. tiles_m * tiles_n - 1) -> its (tile row, tile column) in the grouped
/// order with groups of `group` tile rows. I: int or int64_t (whatever the caller indexes with).
template <class I>
KLAB_HOST_DEVICE constexpr TileCoord<I> grouped_tile_order(I tile, I group, I tiles_m, I tiles_n) {
  const I per_group = group * tiles_n, first_m = tile / per_group * group;
  const I in_group = tile % per_group;
  const I rows_here = group < tiles_m - first_m ? group : tiles_m - first_m;
  return {first_m + in_group % rows_here, in_group / rows_here};
}

/// One work unit of a split-K launch: tile (m, n), K split `split`.
struct SplitKUnit {
  int m, n, split;
};

/// Unit u of a tiles_m x tiles_n grid with K split into ranges, split-major: split u / tiles of
/// tile u % tiles in the grouped order, so a tile's splits are tiles_m * tiles_n units apart and
/// run in the same wave when the units fit one (their partial sums reach the reduction together).
KLAB_HOST_DEVICE constexpr SplitKUnit split_k_unit(int u, int group, int tiles_m, int tiles_n) {
  const int tiles = tiles_m * tiles_n, split = u / tiles;
  const TileCoord<int> c = grouped_tile_order<int>(u - split * tiles, group, tiles_m, tiles_n);
  return {c.m, c.n, split};
}

}  // namespace klab::device

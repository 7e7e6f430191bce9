#pragma once
// A persistent static tile scheduler: a grid of at most one wave of CTAs, each walking the
// tiles blockIdx.x, blockIdx.x + gridDim.x, ... of a tiles_m x tiles_n grid in the grouped order
// of tile_order.hpp; and its split-K form, whose work units are (tile, K split) pairs. The host
// sizes the grid with persistent_grid from the SM count it passes.
#include <algorithm>
#include <cstdint>

#include "klab/device/tile_order.hpp"

namespace klab::device {

/// The CTAs of a persistent launch: one per tile, but no more than `ctas_per_sm` on each of
/// `sm_count` SMs (at least 1).
inline unsigned persistent_grid(int64_t tiles, int sm_count, int ctas_per_sm = 1) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>(tiles, int64_t(sm_count) * ctas_per_sm)));
}

/// The tiles of a tiles_m x tiles_n grid, kGroupM tile rows per rasterisation group.
template <int kGroupM>
struct StaticTileScheduler {
  int tiles_m, tiles_n;

  __host__ __device__ int tiles() const { return tiles_m * tiles_n; }

  /// Calls fn(tile_m, tile_n) for each of this CTA's tiles in turn.
  template <class Fn>
  __device__ __forceinline__ void for_each_tile(Fn&& fn) const {
    for_each_tile_of(blockIdx.x, gridDim.x, fn);
  }

  /// Calls fn(tile_m, tile_n) for the tiles worker, worker + workers, ... in turn: a persistent
  /// loop whose workers are not single CTAs (e.g. the clusters of a grid).
  template <class Fn>
  __device__ __forceinline__ void for_each_tile_of(int worker, int workers, Fn&& fn) const {
    for (int t = worker; t < tiles(); t += workers) {
      const TileCoord<int> c = grouped_tile_order<int>(t, kGroupM, tiles_m, tiles_n);
      fn(c.m, c.n);
    }
  }
};

/// The (tile, K split) units of a tiles_m x tiles_n grid with `splits` K splits, in
/// split_k_unit's order (tile_order.hpp).
template <int kGroupM>
struct SplitKTileScheduler {
  int tiles_m, tiles_n, splits;

  KLAB_HOST_DEVICE int tiles() const { return tiles_m * tiles_n; }
  KLAB_HOST_DEVICE int units() const { return tiles() * splits; }

  /// Calls fn(tile_m, tile_n, split) for each of this CTA's units in turn.
  template <class Fn>
  __device__ __forceinline__ void for_each_unit(Fn&& fn) const {
    for (int u = blockIdx.x; u < units(); u += gridDim.x) {
      const SplitKUnit w = split_k_unit(u, kGroupM, tiles_m, tiles_n);
      fn(w.m, w.n, w.split);
    }
  }
};

}  // namespace klab::device

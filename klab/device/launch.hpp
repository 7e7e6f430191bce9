#pragma once
// Launch-geometry helpers shared by the launchers (host code).
#include <algorithm>
#include <cstdint>

#include "klab/harness/device_info.hpp"

namespace klab::device {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One thread per item: ceil(n / block) blocks (capped at the grid limit).
inline unsigned grid_1d(int64_t n, int block) {
  return static_cast<unsigned>(std::min<int64_t>(ceil_div(n, block), 2147483647));
}

/// A grid-stride launch: enough blocks to fill every SM once at full occupancy, no more.
inline unsigned grid_full_wave(int64_t n_items, int block) {
  const auto& d = device_info();
  const int per_sm = std::max(1, d.max_threads_per_sm / block);
  const int64_t wave = static_cast<int64_t>(d.sm_count) * per_sm;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(wave, ceil_div(n_items, block))));
}

/// The block size a rung uses: the sweep's value when set, else its default.
inline int block_or(int requested, int fallback) { return requested > 0 ? requested : fallback; }

}  // namespace klab::device

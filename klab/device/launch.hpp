#pragma once
// Launch-geometry helpers shared by the launchers (host code). What they need to know about the
// GPU (SM count, threads per SM) the caller passes in, e.g. from klab/harness/device_info.hpp.
#include <algorithm>
#include <cstdint>

namespace klab::device {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One thread per item: ceil(n / block) blocks (capped at the grid limit).
inline unsigned grid_1d(int64_t n, int block) {
  return static_cast<unsigned>(std::min<int64_t>(ceil_div(n, block), 2147483647));
}

/// A grid-stride launch: enough blocks to fill each of `sm_count` SMs once at full occupancy
/// (`max_threads_per_sm` threads), no more.
inline unsigned grid_full_wave(int64_t n_items, int block, int sm_count, int max_threads_per_sm) {
  const int per_sm = std::max(1, max_threads_per_sm / block);
  const int64_t wave = static_cast<int64_t>(sm_count) * per_sm;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(wave, ceil_div(n_items, block))));
}

/// The block size a rung uses: the sweep's value when set, else its default.
inline int block_or(int requested, int fallback) { return requested > 0 ? requested : fallback; }

}  // namespace klab::device

#pragma once
// Launch-geometry helpers shared by the launchers (host code).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "klab/core/cuda_check.hpp"
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

/// A grid-stride launch sized by what is really resident: the occupancy API's blocks per SM for
/// this kernel at this block size (its registers and shared memory included) times the SMs, no
/// more blocks than items. grid_full_wave assumes every SM holds 2048 threads; a kernel whose
/// registers allow fewer gets a grid of more than one wave from it, and a tail of blocks that
/// run after the rest.
template <class Kernel>
unsigned grid_resident_wave(Kernel* kernel, int64_t n_items, int block, size_t dynamic_smem = 0) {
  int per_sm = 0;
  KLAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_smem));
  const int64_t wave = static_cast<int64_t>(device_info().sm_count) * std::max(per_sm, 1);
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(wave, ceil_div(n_items, block))));
}

/// The block size a rung uses: the sweep's value when set, else its default.
inline int block_or(int requested, int fallback) { return requested > 0 ? requested : fallback; }

}  // namespace klab::device

#pragma once
// Grids sized from the occupancy API (host code of CUDA translation units). grid_full_wave
// (launch.hpp) assumes the block reaches full occupancy (2048 threads per SM); a kernel whose
// registers or shared memory allow fewer resident blocks then gets more than one wave, and the
// last wave is a tail. grid_resident_wave asks the runtime how many blocks of this kernel fit on
// one SM; the caller passes the SM count (e.g. from klab/harness/device_info.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"

namespace klab::device {

/// Resident blocks per SM of `kernel` at `block` threads and `smem` dynamic bytes (memoised: the
/// query costs microseconds, a launch of a small problem not many more).
template <class... Params>
int resident_blocks_per_sm(void (*kernel)(Params...), int block, size_t smem = 0) {
  thread_local std::map<std::tuple<const void*, int, size_t>, int> known;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), block, smem);
  if (auto it = known.find(key); it != known.end()) return it->second;
  int n = 0;
  KLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem));
  return known[key] = std::max(n, 1);
}

/// Blocks of `kernel` resident on a GPU of `sm_count` SMs at once: one full wave. (A kernel above
/// 48 KiB of dynamic shared memory must have opted in with cudaFuncSetAttribute first.)
template <class... Params>
int64_t resident_wave(int sm_count, void (*kernel)(Params...), int block, size_t smem = 0) {
  return int64_t(sm_count) * resident_blocks_per_sm(kernel, block, smem);
}

/// A grid-stride launch of exactly one resident wave of `kernel`, or fewer blocks when n_items
/// needs fewer.
template <class... Params>
unsigned grid_resident_wave(int sm_count, void (*kernel)(Params...), int64_t n_items, int block,
                            size_t smem = 0) {
  return static_cast<unsigned>(std::max<int64_t>(
      1, std::min(resident_wave(sm_count, kernel, block, smem), ceil_div(n_items, block))));
}

/// Raises kKernel's dynamic shared-memory limit to `bytes` (above the 48 KiB default) where it
/// is below: the limit is a ceiling and each launch's own size what its CTAs take, so a kernel
/// launched at two sizes (decode v13 and v24 share one) keeps the larger. A call that asks for no
/// more than the kernel was granted returns at once.
template <auto kKernel>
void opt_in_dynamic_smem(int bytes) {
  static std::atomic<int> granted{0};
  if (bytes <= granted.load(std::memory_order_acquire)) return;
  static std::mutex raising;
  const std::lock_guard<std::mutex> lock(raising);
  if (bytes <= granted.load(std::memory_order_relaxed)) return;
  KLAB_CUDA_CHECK(
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  granted.store(bytes, std::memory_order_release);
}

}  // namespace klab::device

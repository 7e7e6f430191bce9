#pragma once
// Shared-memory addresses for inline PTX (cp.async, ldmatrix, mbarriers, TMA).
#include <cstdint>

namespace klab::device {

/// Shared-memory address (32-bit, .shared window) of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace klab::device

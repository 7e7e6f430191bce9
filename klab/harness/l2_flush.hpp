#pragma once
// Evicts the timed kernel's data from L2 before a cold sample (CUDA builds only).
#include <cuda_runtime_api.h>

#include <cstddef>

namespace klab {

/// Reads `bytes` (>= 2x the L2) of `buffer` (zero-filled) through L2 on `stream`.
void flush_l2(void* buffer, size_t bytes, int sm_count, cudaStream_t stream);

}  // namespace klab

#pragma once
// Host-side plumbing shared by the reduce_sum and softmax rungs.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/reduction/block_reduce.cuh"
#include "kernels/reduction/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"

namespace klab::reduction {

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// A block size from a sweep, rounded up to whole warps (the block reductions need them).
inline int warp_multiple(int threads) { return std::clamp((threads + 31) / 32 * 32, 32, 1024); }

}  // namespace klab::reduction

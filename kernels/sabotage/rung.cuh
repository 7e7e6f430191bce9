#pragma once
// Shared plumbing of the sabotage rungs: the variant skeleton, the stream cast and the stencil.
#include <cuda_runtime.h>

#include <string>

#include "kernels/sabotage/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"

namespace klab::sabotage {

/// A GPU rung of the sabotage family (f32). The summary names the planted fault.
inline Variant gpu_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  return gpu_variant_of("sabotage." + rung, summary, 70, {DType::f32}, std::move(launch));
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// y[i] from x[i-1], x[i], x[i+1]: the weights are powers of two, so only the adds round.
__device__ __forceinline__ float stencil(float left, float centre, float right) {
  return 0.25f * left + 0.5f * centre + 0.25f * right;
}

}  // namespace klab::sabotage

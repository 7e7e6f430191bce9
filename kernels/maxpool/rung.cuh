#pragma once
// Shared plumbing of the maxpool GPU rungs: the variant skeleton and the stream cast.
#include <string>

#include "kernels/maxpool/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"

namespace klab::maxpool {

inline constexpr int kDefaultBlock = 256;

/// A GPU rung of the maxpool family (f32 and bf16).
inline Variant gpu_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  Variant v =
      gpu_variant_of("maxpool." + rung, summary, 70, {DType::f32, DType::bf16}, std::move(launch));
  v.info.sweepable = true;
  return v;
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

}  // namespace klab::maxpool

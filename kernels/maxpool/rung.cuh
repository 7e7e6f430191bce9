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
  Variant v;
  v.info.id = "maxpool." + rung;
  v.info.summary = summary;
  v.info.min_sm = 70;
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::gpu;
  v.info.sweepable = true;
  v.launch = std::move(launch);
  return v;
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

}  // namespace klab::maxpool

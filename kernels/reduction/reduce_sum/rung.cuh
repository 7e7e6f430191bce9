#pragma once
// Shared plumbing of the reduce_sum rungs.
#include <cuda_bf16.h>

#include <string>

#include "kernels/reduction/common.cuh"

namespace klab::reduction {

/// Calls fn(x) with x the typed input pointer (const float* or const __nv_bfloat16*).
template <class Fn>
void with_sum_input(const Problem& p, Buffers& b, Fn&& fn) {
  device::dispatch_among<float, __nv_bfloat16>(p.dtype, "reduce_sum",
                                               [&]<class T>() { fn(b.ptr<const T>("x")); });
}

inline Variant sum_variant(
    const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  Variant v;
  v.info.id = "reduce_sum." + rung;
  v.info.summary = summary;
  v.info.min_sm = 70;
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::gpu;
  v.launch = std::move(launch);
  return v;
}

}  // namespace klab::reduction

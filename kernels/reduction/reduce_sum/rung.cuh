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
  return gpu_variant_of("reduce_sum." + rung, summary, 70, {DType::f32, DType::bf16},
                        std::move(launch));
}

}  // namespace klab::reduction

#pragma once
// Maps klab::DType to device element types and dispatches a templated launcher on it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>

#include "klab/core/errors.hpp"
#include "klab/core/dtype.hpp"

namespace klab::device {

/// Calls fn.template operator()<T>() with T the device type of `t`, for t among f32/f16/bf16.
template <class Fn>
void dispatch_float(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: fn.template operator()<float>(); return;
    case DType::f16: fn.template operator()<__half>(); return;
    case DType::bf16: fn.template operator()<__nv_bfloat16>(); return;
    default: throw Error("dtype " + std::string(dtype_name(t)) + " not dispatched here");
  }
}

template <class T>
__device__ __forceinline__ float to_float(T v) { return static_cast<float>(v); }
template <class T>
__device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

}  // namespace klab::device

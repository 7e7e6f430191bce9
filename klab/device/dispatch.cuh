#pragma once
// Maps klab::DType to device element types and dispatches a templated launcher on it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>
#include <type_traits>

#include "klab/core/errors.hpp"
#include "klab/core/dtype.hpp"

namespace klab::device {

/// Calls fn.template operator()<T>() with T the device type of `t`, for t among f32/f16/bf16.
template <class Fn>
void dispatch_float(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32:
      fn.template operator()<float>();
      return;
    case DType::f16:
      fn.template operator()<__half>();
      return;
    case DType::bf16:
      fn.template operator()<__nv_bfloat16>();
      return;
    default:
      throw Error("dtype " + std::string(dtype_name(t)) + " not dispatched here");
  }
}

/// The DType of a device element type.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, __half>)
    return DType::f16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return DType::bf16;
  else
    static_assert(sizeof(T) == 0, "no DType for this element type");
}

/// Calls fn.template operator()<T>() with T the one of Ts whose DType is `t`; `what` names the
/// caller in the error for any other dtype.
template <class... Ts, class Fn>
void dispatch_among(DType t, const char* what, Fn&& fn) {
  const bool done = ((dtype_of<Ts>() == t ? (fn.template operator()<Ts>(), true) : false) || ...);
  if (!done)
    throw Error(std::string(what) + ": dtype " + std::string(dtype_name(t)) + " not dispatched");
}

template <class T>
__device__ __forceinline__ float to_float(T v) {
  return static_cast<float>(v);
}
template <class T>
__device__ __forceinline__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

}  // namespace klab::device

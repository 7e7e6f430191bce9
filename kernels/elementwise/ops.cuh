#pragma once
// The elementwise operations, as functors every rung applies lane by lane in fp32.
#include "klab/device/dispatch.cuh"
#include "klab/device/vec.cuh"

namespace klab::elementwise {

struct AddOp {  // out = a + b
  static constexpr int kInputs = 2;
  __device__ float operator()(float a, float b) const { return a + b; }
};

struct SaxpyOp {  // y = alpha * x + y, one fused multiply-add: a single rounding
  static constexpr int kInputs = 2;
  float alpha;
  __device__ float operator()(float x, float y) const { return __fmaf_rn(alpha, x, y); }
};

struct ReluOp {  // out = max(x, 0)
  static constexpr int kInputs = 1;
  __device__ float operator()(float x) const { return x > 0.f ? x : 0.f; }
};

/// Pointers of one map problem: kInputs inputs, one output (may alias an input: saxpy).
template <class T, int kIn>
struct MapArgs {
  static constexpr int kInputs = kIn;
  const T* in[kIn];
  T* out;
  int64_t n;
};

template <class Op, class T, int kIn>
__device__ __forceinline__ T apply_at(const Op& op, const MapArgs<T, kIn>& a, int64_t i) {
  using device::from_float;
  using device::to_float;
  if constexpr (kIn == 1)
    return from_float<T>(op(to_float(a.in[0][i])));
  else
    return from_float<T>(op(to_float(a.in[0][i]), to_float(a.in[1][i])));
}

/// op applied lane by lane to kIn 16-byte vectors (the vectorised and bulk-copy rungs' body).
template <class Op, class T, int kIn>
__device__ __forceinline__ device::Vec16<T> apply_vec16(const Op& op,
                                                        const device::Vec16<T> (&in)[kIn]) {
  using device::from_float;
  using device::to_float;
  device::Vec16<T> out;
#pragma unroll
  for (int e = 0; e < device::Vec16<T>::kN; ++e) {
    if constexpr (kIn == 1)
      out.v[e] = from_float<T>(op(to_float(in[0].v[e])));
    else
      out.v[e] = from_float<T>(op(to_float(in[0].v[e]), to_float(in[1].v[e])));
  }
  return out;
}

// RGB -> gray (ITU-R BT.601 weights), interleaved RGB f32 in, one f32 per pixel out.
inline constexpr float kGrayR = 0.299f, kGrayG = 0.587f, kGrayB = 0.114f;
__device__ __forceinline__ float gray(float r, float g, float b) {
  return __fmaf_rn(kGrayB, b, __fmaf_rn(kGrayG, g, kGrayR * r));
}

}  // namespace klab::elementwise

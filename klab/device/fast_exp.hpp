#pragma once
// exp2 for softmax terms, where the argument is t = score - running max (log2 units) and the
// result lies in [0, 1] (up to 2^8 under a lazily raised max):
// - ex2_ftz: the multi-function unit's ex2.approx with results below 2^-126 flushed to zero.
//   One MUFU.EX2. exp2f without -ftz compiles to a compare, two conditional multiplies and the
//   MUFU (to scale subnormal results), three more instructions per term on the issue slots the
//   softmax shares with the GEMM's warps. A flushed term is below 2^-126 of its row's largest:
//   it moves the row's sum by less than fp32 holds.
// - ex2_poly: the same value on the FMA and integer units (FlashAttention 4's emulation, which
//   moves part of the terms off the MUFU when it, not the issue rate, bounds the softmax):
//   2^t = 2^n * 2^f with n = round(t) found by the 1.5 * 2^23 addition and f = t - n in
//   [-1/2, 1/2]; 2^f by a degree-5 polynomial (near-minimax in relative error, 7.5e-8), n added
//   to its exponent field. Relative error 2.2e-7 over [-125, 64] in fp32 (3.6 units of fp32's
//   roundoff; ex2.approx's is 2 ulp, 4 units), checked by a CPU test; results below 2^-125 are
//   0 (so exp2(-inf) = 0: a masked score's term vanishes exactly, as under ex2.approx). About
//   a dozen FMA/ALU instructions against one MUFU: it pays only where the MUFU is the bottleneck and
//   issue slots are free. Host and device: the CPU tests run it.
#include <cstdint>
#include <cstring>

#include "klab/device/host_device.hpp"

namespace klab::device {

#if defined(__CUDACC__)
/// exp2(t) on the MUFU, results below 2^-126 flushed to zero (ex2.approx.ftz.f32).
__device__ __forceinline__ float ex2_ftz(float t) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
}
#endif

/// Below this ex2_poly returns 0 (its exponent arithmetic stays in the normal range above it).
inline constexpr float kEx2PolyMin = -125.f;

namespace detail {
KLAB_HOST_DEVICE inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
KLAB_HOST_DEVICE inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
KLAB_HOST_DEVICE inline float fma_f32(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}
}  // namespace detail

/// exp2(t) for t <= 64 by the FMA and integer units (see above); 0 below kEx2PolyMin and for -inf.
KLAB_HOST_DEVICE inline float ex2_poly(float t) {
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: t + kRound holds round(t) in its low bits
  const float tc = t > kEx2PolyMin ? t : kEx2PolyMin;
  const float r = tc + kRound;
  const float f = tc - (r - kRound);  // in [-1/2, 1/2]
  // 2^f: degree-5 Horner, coefficients of f^5 .. f^0 (near-minimax, relative error 7.5e-8).
  using detail::fma_f32;
  float p = fma_f32(0.001327647129073739f, f, 0.009675541892647743f);
  p = fma_f32(p, f, 0.05550713092088699f);
  p = fma_f32(p, f, 0.24022120237350464f);
  p = fma_f32(p, f, 0.6931469440460205f);
  p = fma_f32(p, f, 1.0000001192092896f);
  // round(t)'s two's complement sits in r's low mantissa bits: shifted to the exponent field it
  // adds n to p's exponent (p in [0.70, 1.42], so the field stays in 1 .. 254 for t in range).
  const float y = detail::bits_float(detail::float_bits(p) + (detail::float_bits(r) << 23));
  return t >= kEx2PolyMin ? y : 0.f;
}

}  // namespace klab::device

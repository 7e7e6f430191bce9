#pragma once
// FP8 (e4m3) conversions on sm_89+: to f16 (cvt.rn.f16x2.e4m3x2: exact, every e4m3 value is an
// f16 value), for kernels that read FP8 data into f16 tensor-core operands; and from fp32
// (rounded to nearest even, saturated), for kernels that write FP8 data.
#include <cuda_fp8.h>

#include <cstdint>

namespace klab::device {

/// Two e4m3 values (byte 0 the low element) as an f16x2 word (the low half from byte 0).
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t x) {
  uint32_t r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(r) : "h"(x));
#else
  r = 0;
  __trap();
#endif
  return r;
}

/// The low and the high two e4m3 values of a word as f16x2 words. The word is split into its
/// 16-bit halves inside the asm (mov.b32 {lo, hi}): ptxas then reads the high half in place
/// (F2FP's .H1 operand), where `w >> 16` in C++ cost a shift (SHF) before every second
/// conversion, on the path from the ldmatrix to the MMA.
__device__ __forceinline__ void e4m3x4_to_f16x2x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("{\n"
      "  .reg .b16 l, h;\n"
      "  mov.b32 {l, h}, %2;\n"
      "  cvt.rn.f16x2.e4m3x2 %0, l;\n"
      "  cvt.rn.f16x2.e4m3x2 %1, h;\n"
      "}\n"
      : "=r"(lo), "=r"(hi)
      : "r"(w));
#else
  lo = hi = 0;
  __trap();
#endif
}

/// 8 floats to e4m3, rounded to nearest even and saturated to +-448 (cvt.rn.satfinite), packed
/// in element order for one 8-byte store.
__device__ __forceinline__ uint2 pack8_e4m3(const float (&f)[8]) {
  uint32_t word[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const uint32_t lo =
        __nv_cvt_float2_to_fp8x2(make_float2(f[4 * j], f[4 * j + 1]), __NV_SATFINITE, __NV_E4M3);
    const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(f[4 * j + 2], f[4 * j + 3]),
                                                 __NV_SATFINITE, __NV_E4M3);
    word[j] = lo | (hi << 16);
  }
  return make_uint2(word[0], word[1]);
}

/// pack8_e4m3 of f times `scale`, each product formed just before its conversion (no 8 products
/// held at once: a writer at its register bound keeps its budget).
__device__ __forceinline__ uint2 pack8_e4m3_scaled(const float (&f)[8], float scale) {
  uint32_t word[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const uint32_t lo = __nv_cvt_float2_to_fp8x2(
        make_float2(f[4 * j] * scale, f[4 * j + 1] * scale), __NV_SATFINITE, __NV_E4M3);
    const uint32_t hi = __nv_cvt_float2_to_fp8x2(
        make_float2(f[4 * j + 2] * scale, f[4 * j + 3] * scale), __NV_SATFINITE, __NV_E4M3);
    word[j] = lo | (hi << 16);
  }
  return make_uint2(word[0], word[1]);
}

}  // namespace klab::device

#pragma once
// FP8 (e4m3) to f16 conversions on sm_89+ (cvt.rn.f16x2.e4m3x2: exact, every e4m3 value is an
// f16 value), for kernels that read FP8 data into f16 tensor-core operands.
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

/// The low and the high two e4m3 values of a word as f16x2 words.
__device__ __forceinline__ void e4m3x4_to_f16x2x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  lo = e4m3x2_to_f16x2(static_cast<uint16_t>(w & 0xffffu));
  hi = e4m3x2_to_f16x2(static_cast<uint16_t>(w >> 16));
}

}  // namespace klab::device

#pragma once
// Hopper (sm_90a) FP8 warpgroup MMA: wgmma.mma_async m64n128k32 with e4m3 A and B and fp32
// accumulators (attention's FP8 forward). Unlike the 16-bit forms (wgmma_sm90.cuh) both
// operands must be K-major (the instruction has no transpose for 8-bit types). The accumulator
// layout is the 16-bit forms' (wgmma_fragment.hpp); the register A fragment of k32 holds, in a
// thread's register j (warp w, lane l, g = l / 4, t = l % 4), the four e4m3 values of row
// 16 w + g + 8 (j % 2), k 4 t + 16 (j / 2) .. + 3, the lowest k in byte 0 (PTX ISA, "Register
// Fragments", matrix A of wgmma .m64nNk32; attention's fa3_fp8.hpp models the mapping on the CPU).
// Also the packing of four floats into an e4m3x4 word.
#include <cstdint>

#include "klab/device/warpgroup_sm90.cuh"

namespace klab::device {

// The 64 accumulators' names and operands of an m64n128 FP8 wgmma (undefined at the end).
#define KLAB_QGMMA_D                                                                           \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24," \
  "%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,"   \
  "%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define KLAB_QGMMA_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define KLAB_QGMMA_F16(i) \
  KLAB_QGMMA_F4(i), KLAB_QGMMA_F4(i + 4), KLAB_QGMMA_F4(i + 8), KLAB_QGMMA_F4(i + 12)
#define KLAB_QGMMA_OUT KLAB_QGMMA_F16(0), KLAB_QGMMA_F16(16), KLAB_QGMMA_F16(32), KLAB_QGMMA_F16(48)

/// d (+)= A * B for one m64n128k32 block, A (64 x 32) and B (32 x 128) e4m3 in shared memory,
/// both K-major (descriptors desc_a, desc_b); accumulate = false overwrites d.
__device__ __forceinline__ void wgmma_ss_e4m3_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                   bool accumulate) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{" KLAB_QGMMA_D
      "}, %64, %65, p, "
      "1, 1;\n}\n"
      : KLAB_QGMMA_OUT
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));
#else
  (void)d, (void)desc_a, (void)desc_b, (void)accumulate;
  __trap();
#endif
}

/// d (+)= A * B for one m64n128k32 block with A's e4m3 values from registers (the fragment
/// above) and B (32 x 128) e4m3 in shared memory, K-major. The A registers must stay unchanged
/// until the group completes.
__device__ __forceinline__ void wgmma_rs_e4m3_n128(float (&d)[64], const uint32_t (&a)[4],
                                                   uint64_t desc_b, bool accumulate) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{" KLAB_QGMMA_D
      "}, "
      "{%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
      : KLAB_QGMMA_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(accumulate)));
#else
  (void)d, (void)a, (void)desc_b, (void)accumulate;
  __trap();
#endif
}

/// Four floats as one word of e4m3 values (round to nearest, saturating at +-448), x0 in byte 0.
__device__ __forceinline__ uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3) {
  uint16_t lo, hi;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // cvt's first source goes to the upper byte.
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(x1), "f"(x0));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(x3), "f"(x2));
#else
  lo = hi = 0;
  (void)x0, (void)x1, (void)x2, (void)x3;
  __trap();
#endif
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

#undef KLAB_QGMMA_OUT
#undef KLAB_QGMMA_F16
#undef KLAB_QGMMA_F4
#undef KLAB_QGMMA_D

}  // namespace klab::device

#pragma once
// Hopper (sm_90a) warpgroup matrix multiply-accumulate, wgmma.mma_async: the four warps of a
// warpgroup (warpgroup_sm90.cuh) multiply a 64 x N x 16 block together, operands read from
// shared memory through descriptors (wgmma_desc.hpp), accumulators in registers. Asynchronous:
// issue after wgmma_fence(), close with wgmma_commit_group(), read the accumulators after
// wgmma_wait_group<...>().
//
// Accumulator layout (PTX ISA, "Register Fragments" of wgmma .m64nNk16, f32 D): thread t of the
// warpgroup, warp w = t / 32, lane l = t % 32, holds for n8 block j (0..N/8-1) the four floats
// d[4j + 0..1] at (row 16w + l/4,     column 8j + 2(l%4) + 0..1) and
//     d[4j + 2..3] at (row 16w + l/4 + 8, column 8j + 2(l%4) + 0..1).
#include <cstdint>

#include "klab/device/warpgroup_sm90.cuh"
#include "klab/device/wgmma_desc.hpp"

namespace klab::device {

/// Keeps the compiler from moving reads or writes of an accumulator register across the wgmma
/// fence / commit / wait (asm volatile orders instructions, not the registers they work on).
__device__ __forceinline__ void wgmma_fence_operand(float& r) {
  asm volatile("" : "+f"(r)::"memory");
}

template <int kN>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) wgmma_fence_operand(d[i]);
}

/// d (+)= A * B for one m64n64k16 block: A 64 x 16 and B 16 x 64 bf16 in shared memory
/// (descriptors desc_a, desc_b), d 64 x 64 f32 spread over the warpgroup (32 floats a thread).
/// accumulate = false overwrites d (scale-d 0: the first k-block). kTransA / kTransB = 0: the
/// operand is K-major (rows of A, columns of B contiguous in K); 1: transposed (MN-major).
template <int kTransA = 0, int kTransB = 0>
__device__ __forceinline__ void wgmma_m64n64k16_bf16_ss(float (&d)[32], uint64_t desc_a,
                                                        uint64_t desc_b, bool accumulate) {
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1));
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,"
      "%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,"
      "%24,%25,%26,%27,%28,%29,%30,%31}, "
      "%32, %33, p, 1, 1, %35, %36;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)), "n"(kTransA), "n"(kTransB));
#else
  __trap();
#endif
}

}  // namespace klab::device

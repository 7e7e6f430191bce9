#pragma once
// Ampere-class (sm_80+) warp-level tensor-core primitives, as thin PTX wrappers: mma.sync
// m16n8k16 (bf16/f16 in, f32 accumulate), ldmatrix, movmatrix, and packing floats into their b32
// operands.
// They also run on sm_90 (Hopper keeps the sm_80 instructions; its full rate needs wgmma).
// The asynchronous copies that feed them are in cp_async.cuh.
//
// Fragment layouts (PTX ISA, "mma.m16n8k16"; g = lane / 4, t = lane % 4):
//   A 16x16 row-major, 4 x b32: a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8  "col" (k-major per n), 2 x b32: b0 (k = 2t..2t+1, n = g)  b1 (k = 2t+8.., n = g)
//   C 16x8  f32, 4 floats: c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..2t+1)
// ldmatrix.x4 loads four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i,
// and register i of lane l receives row l/4, elements 2(l%4)..+1 of matrix i (.trans: column).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace klab::device {

// ---- mma.sync ----

/// d += a * b for one m16n8k16 tile, bf16 inputs, f32 accumulators (in place).
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4],
                                                  const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

/// d += a * b for one m16n8k16 tile, f16 inputs, f32 accumulators (in place).
__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

/// The m16n8k16 mma for element type T (__nv_bfloat16 or __half).
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    mma_m16n8k16_bf16(d, a, b);
  else
    mma_m16n8k16_f16(d, a, b);
}

// ---- ldmatrix ----

/// Four 8x8 b16 matrices from shared memory (lane l addresses row l%8 of matrix l/8).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t saddr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(saddr));
}

/// As ldmatrix_x4, each matrix transposed: for a row-major [k][n] B tile this yields the "col" fragment.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t saddr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(saddr));
}

/// One 8x8 b16 matrix held as ldmatrix's fragment (lane l: row l/4, elements 2(l%4)..+1),
/// transposed in registers across the warp (movmatrix, sm_75+): lane l then holds row l/4 of the
/// transpose, i.e. column l/4, rows 2(l%4)..+1 of the input.
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x) {
  uint32_t r;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(r) : "r"(x));
  return r;
}

// ---- packing ----

/// Two floats rounded to one b32 register of two T (low half = lo).
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

}  // namespace klab::device

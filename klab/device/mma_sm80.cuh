#pragma once
// Ampere-class (sm_80+) warp-level tensor-core and async-copy primitives, as thin PTX wrappers:
// mma.sync m16n8k16 (bf16/f16 in, f32 accumulate), ldmatrix, cp.async.
// They also run on sm_90 (Hopper keeps the sm_80 instructions; its full rate needs wgmma).
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

#include "klab/device/smem.cuh"

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

// ---- cp.async ----

/// 16-byte global -> shared copy that bypasses L1 (.cg). When `valid` is false the source is
/// not read (src-size 0) and the 16 destination bytes are zero-filled: predicated edge tiles.
/// Both addresses must be 16-byte aligned; `gsrc` must still be a valid address.
__device__ __forceinline__ void cp_async_16(uint32_t sdst, const void* gsrc, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sdst), "l"(gsrc),
               "r"(src_bytes)
               : "memory");
}

/// 4-byte global -> shared copy (.ca: the only cache mode that takes sizes below 16), zero-filled
/// when `valid` is false. Lets a copy land anywhere in shared memory, e.g. transposed.
__device__ __forceinline__ void cp_async_4(uint32_t sdst, const void* gsrc, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sdst), "l"(gsrc),
               "r"(src_bytes)
               : "memory");
}

/// cp_async_4 issued only when `issue` (a predicate, no branch), and without the compiler memory
/// barrier, so that the compiler may move unrelated shared loads across it: for copies spread
/// between a k loop's fragment loads (sgemm v17). The caller never reads the destination before
/// a cp_async_wait and __syncthreads, which keep their barriers.
__device__ __forceinline__ void cp_async_4_if(bool issue, uint32_t sdst, const void* gsrc,
                                              bool valid) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n"
      " @p cp.async.ca.shared.global [%0], [%1], 4, %2;\n}\n" ::"r"(sdst),
      "l"(gsrc), "r"(valid ? 4 : 0), "r"(int(issue)));
}

/// cp_async_16 as cp_async_4_if issues cp_async_4.
__device__ __forceinline__ void cp_async_16_if(bool issue, uint32_t sdst, const void* gsrc,
                                               bool valid) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n"
      " @p cp.async.cg.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(sdst),
      "l"(gsrc), "r"(valid ? 16 : 0), "r"(int(issue)));
}

/// Closes the group of cp.async issued since the previous commit. kCompilerBarrier = false
/// leaves out the compiler memory barrier (for the copies of cp_async_4_if / cp_async_16_if:
/// volatile asm keeps the commit after them).
template <bool kCompilerBarrier = true>
__device__ __forceinline__ void cp_async_commit() {
  if constexpr (kCompilerBarrier)
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  else
    asm volatile("cp.async.commit_group;\n");
}

/// Waits until at most kPending committed groups are still in flight (this thread's copies only:
/// follow with __syncthreads() before reading what other threads copied).
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
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

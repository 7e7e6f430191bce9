#pragma once
// Ampere-class (sm_80+) asynchronous global -> shared copies (cp.async), as thin PTX wrappers:
// 4- and 16-byte copies (zero-filled when not valid, optionally predicated), their commit groups
// and waits, and the arrival on an mbarrier once a thread's copies have landed.
#include <cstdint>

#include "klab/device/smem.cuh"

namespace klab::device {

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

/// One arrival once every cp.async this thread issued so far has landed (.noinc: the arrival
/// counts against the barrier's expected count, so init must include it). Lets cp.async copies
/// complete a pipeline stage's mbarrier, like TMA boxes do with their byte count.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar))
               : "memory");
}

}  // namespace klab::device

#pragma once
// Hopper (sm_90) bulk asynchronous copies and the mbarriers they complete on.
// 1D form: cp.async.bulk moves a contiguous, 16-byte aligned block of global memory into shared
// memory on the copy engine (TMA) and signals an mbarrier with the bytes delivered.
#include <cstdint>

#include "klab/device/smem.cuh"

namespace klab::device {

/// Initialises an mbarrier expecting `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}

/// Makes initialised mbarriers visible to the async proxy (the copy engine).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Orders this thread's generic-proxy shared-memory accesses before later async-proxy ones.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// One arrival that also tells the barrier to expect `bytes` more from async copies this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// One arrival (release: this thread's earlier shared-memory reads and writes are ordered before
/// it), e.g. a consumer handing a pipeline stage back to the thread that refills it.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

/// Barrier among `threads` threads (a multiple of 32, whole warps) on hardware barrier `id`
/// (1..15; __syncthreads uses 0): for a subset of a block's warps, e.g. a warp-specialised
/// kernel's consumers while its producer warp runs on.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Warp-specialised register budgets (sm_90a): a warpgroup (all 128 threads execute it) gives
/// registers back to the SM's pool (dec) or takes them from it (inc, waiting until they are
/// free), so that producer warps that only issue copies can leave their registers to the math
/// warps. kRegs: 24..256, a multiple of 8.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0);
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0);
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

/// One arrival once every cp.async this thread issued so far has landed (.noinc: the arrival
/// counts against the barrier's expected count, so init must include it). Lets cp.async copies
/// complete a pipeline stage's mbarrier, like TMA boxes do with their byte count.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar))
               : "memory");
}

/// Whether the barrier's phase with parity `parity` has completed, without waiting (one probe).
/// Parity only tells the current phase from the one before it: probe a phase that is current or
/// just completed, never one further back.
/// Issued a few steps ahead of the mbarrier_wait it precedes, its latency hides behind the math
/// in between, and the wait then only branches on a predicate already known.
__device__ __forceinline__ bool mbarrier_test_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// Spins until the barrier's phase with parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_loop:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_loop;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

/// Bulk copy of `bytes` (multiple of 16, both addresses 16-byte aligned) global -> shared,
/// completing on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* smem_dst, const void* gmem_src, uint32_t bytes,
                                              uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(smem_dst)),
      "l"(gmem_src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

}  // namespace klab::device

// ---------------------------------------------------------------------------------------------
// Tensor (2D tile) form: cp.async.bulk.tensor moves a box described by a CUtensorMap (built on
// the host, see tensor_map.hpp, passed as a __grid_constant__ kernel parameter).

namespace klab::device {

/// Loads the box at element coordinates (x: inner, y: outer) into shared memory, completing on
/// `bar`. Out-of-range elements arrive as zeros and still count towards the transaction bytes.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const void* tensor_map, int x, int y,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

/// Stores a box from shared memory to (x, y); out-of-range elements are not written. Part of the
/// thread's current bulk group (see bulk_commit_group / bulk_wait_group_read).
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, int x, int y,
                                             const void* smem_src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
          tensor_map),
      "r"(x), "r"(y), "r"(smem_addr(smem_src))
      : "memory");
}

/// Closes the bulk group of the stores issued so far by this thread.
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most kPending of this thread's bulk groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

/// Waits until at most kPending of this thread's bulk groups are incomplete (writes done).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace klab::device

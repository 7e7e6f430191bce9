#pragma once
// Hopper (sm_90) mbarriers: the shared-memory barriers that asynchronous copies (TMA, bulk
// copies, cp.async) complete on and that warp-specialised pipelines hand stages back with.
// A barrier counts arrivals (and, with expect_tx, transaction bytes) per phase; waits name the
// phase by its parity.
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

/// One arrival that also tells the barrier to expect `bytes` more from async copies this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// Tells the barrier to expect `bytes` more from async copies this phase, without an arrival
/// (the issuing thread arrives later, e.g. once it has written what else the phase hands over).
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// One arrival (release: this thread's earlier shared-memory reads and writes are ordered before
/// it), e.g. a consumer handing a pipeline stage back to the thread that refills it.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
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

}  // namespace klab::device

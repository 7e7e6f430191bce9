#pragma once
// Hopper (sm_90a) warpgroups: four consecutive warps (128 threads, the first warp's index a
// multiple of 4) that issue wgmma together and trade registers with setmaxnreg. Here: which
// warpgroup a thread is in, register budgets, named barriers among a subset of warps, and the
// fence / commit / wait that order wgmma (wgmma_sm90.cuh holds the mma itself).
#include <cstdint>

namespace klab::device {

inline constexpr int kWarpgroupThreads = 128;

// ---- warpgroup indices ----

/// The block's warpgroup this thread belongs to (threadIdx.x / 128, 1-D blocks).
__device__ __forceinline__ int warpgroup_index() { return int(threadIdx.x) / kWarpgroupThreads; }

/// This thread's index within its warpgroup (0..127).
__device__ __forceinline__ int warpgroup_thread() { return int(threadIdx.x) % kWarpgroupThreads; }

/// This thread's warp within its warpgroup (0..3).
__device__ __forceinline__ int warp_in_warpgroup() { return warpgroup_thread() / 32; }

// ---- register budgets ----

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

// ---- named barriers ----

/// Barrier among `threads` threads (a multiple of 32, whole warps) on hardware barrier `id`
/// (1..15; __syncthreads uses 0): for a subset of a block's warps, e.g. a warp-specialised
/// kernel's consumers while its producer warp runs on.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// named_barrier_sync that also returns, to every thread of the `threads`, whether any of them
/// passed `pred` true (bar.red.or): a decision one thread made, shared without shared memory.
__device__ __forceinline__ bool named_barrier_or(int id, int threads, bool pred) {
  uint32_t any;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.u32 p, %3, 0;\n bar.red.or.pred q, %1, %2, p;\n selp.u32 "
      "%0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(id), "r"(threads), "r"(uint32_t(pred))
      : "memory");
  return any != 0;
}

/// Arrives on hardware barrier `id` without waiting: counts this warp's threads towards the
/// `threads` that complete it, so that other warps' named_barrier_sync(id, threads) may pass (the
/// producer side of an ordering between warpgroups, e.g. attention v05's ping-pong).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// ---- wgmma ordering ----

/// Orders this warpgroup's earlier register and shared-memory accesses before the wgmma that
/// follow: needed before the first wgmma, and whenever the accumulator or A registers were
/// touched by other instructions since the last one.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/// Closes the group of wgmma issued since the previous commit.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// Waits until at most kPending committed wgmma groups are still running; only then may their
/// accumulators be read, or their shared-memory operands overwritten.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(kPending >= 0);
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

/// Keeps the register work that `value` depends on ahead of the next wgmma_wait_group: a store
/// of it to this thread's own shared-memory word (`slot`, a shared address nobody reads). ptxas
/// moves WARPGROUP.DEPBAR up past independent ALU work (attention v05's softmax under its P V
/// went below the wait for that P V: no overlap), but not past a memory access, and the store
/// cannot issue before its operand exists. One store a call; give each writer its own word so
/// that no two threads write one (racecheck).
__device__ __forceinline__ void keep_before_wgmma_wait(uint32_t slot, float value) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(slot), "f"(value) : "memory");
}

}  // namespace klab::device

#pragma once
// The warp-specialised pipeline shared by hgemm v09 and sgemm v18 (sm_90a): a producer warpgroup
// fills a ring of kStages shared-memory stages; consumer warps read them. Each stage has two
// mbarriers: "full" completes a phase when the stage's data has landed, "empty" when every
// consumer thread is done reading it. Only the stage's contents, the loads and the math differ
// between kernels; this header holds the protocol (the thread and register split, the barriers'
// setup, the producer's and the consumers' loops).
#include <algorithm>
#include <cstdint>

#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/ring_slot.hpp"

namespace klab::device {

/// Threads and registers of a warp-specialised block: kConsumerWarps math warps (whole
/// warpgroups) first, then one producer warpgroup (setmaxnreg works per warpgroup). Each of the
/// SM's 4 sub-partitions holds 16384 registers and runs every 4th warp. The launch gives every
/// thread kLaunchRegs (65536 / kThreads, rounded down to 8; __launch_bounds__(kThreads, 1)); then
/// the producers drop to kProducerRegs and the consumers take what that frees (40 by default;
/// three consumer warpgroups take 24, the least setmaxnreg allows, to leave them 160).
template <int kConsumerWarps_, int kProducerRegs_ = 40>
struct WarpSpecialized {
  static constexpr int kConsumerWarps = kConsumerWarps_;
  static constexpr int kConsumers = 32 * kConsumerWarps, kProducers = 128;
  static constexpr int kThreads = kConsumers + kProducers;
  static constexpr int kLaunchRegs = (65536 / kThreads) / 8 * 8;
  static constexpr int kProducerRegs = kProducerRegs_;
  static constexpr int kConsumerRegs =
      std::min(256, (16384 / 32 - kProducerRegs) / (kConsumerWarps / 4) / 8 * 8);
  static_assert(kConsumerWarps % 4 == 0, "whole consumer warpgroups");
  static_assert(kConsumerRegs >= kLaunchRegs && kProducerRegs <= kLaunchRegs);
};

/// Sets up the ring's barriers: full[s] expects full_arrivals per phase, empty[s] empty_arrivals.
/// Every thread of the block calls it: thread 0 initialises, then a __syncthreads publishes them.
template <int kStages>
__device__ __forceinline__ void init_ring(uint64_t* full, uint64_t* empty, uint32_t full_arrivals,
                                          uint32_t empty_arrivals) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], full_arrivals);
      mbarrier_init(&empty[s], empty_arrivals);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
}

/// The producer's loop: for k-tile kt, once the slot's previous contents were released (from the
/// second lap on), fill(kt, slot) issues the copies that complete full[slot].
template <int kStages, class Fill>
__device__ __forceinline__ void produce_ring(int k_tiles, uint64_t* empty, Fill&& fill) {
  RingSlot<kStages> slot;
  for (int kt = 0; kt < k_tiles; ++kt, slot = slot.next()) {
    if (kt >= kStages) mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
    fill(kt, slot.index);
  }
}

/// A consumer's loop over k_tiles >= 1 stages of kSteps steps, fragments double-buffered across steps
/// and stages: load(stage, step, buffer) fetches a step's fragments, compute(buffer) consumes
/// them. The next step's load is issued before this step's compute; at a stage's last step that
/// load reads the next stage, once its full barrier has completed. kProbe (-1: none): the step at
/// which the next stage's barrier is tested without waiting, so that the last step waits only
/// when the test said no (a branch on a predicate known long before, instead of a try_wait's
/// latency in front of the loads). After a stage's last compute the thread arrives on its empty
/// barrier: that compute used the stage's last fragments, so its reads are done.
template <int kStages, int kSteps, int kProbe, class Load, class Compute>
__device__ __forceinline__ void consume_ring(int k_tiles, uint64_t* full, uint64_t* empty,
                                             Load&& load, Compute&& compute) {
  static_assert(kSteps % 2 == 0, "a stage's last step loads the next stage's into buffer 0");
  static_assert(kProbe < kSteps - 1, "the probe comes before the last step");
  RingSlot<kStages> slot;
  mbarrier_wait(&full[0], 0);  // k_tiles >= 1: problems have no empty dimension
  load(0, 0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const RingSlot<kStages> next = slot.next();
    bool next_landed = false;  // known at the probe (kProbe >= 0)
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      if (step == kProbe)  // on the last k-tile too (unused there): no branch in the loop
        next_landed = mbarrier_test_wait(&full[next.index], next.phase);
      if (step + 1 < kSteps) {
        load(slot.index, step + 1, (step + 1) & 1);
      } else if (kt + 1 < k_tiles) {
        if (!next_landed) mbarrier_wait(&full[next.index], next.phase);
        load(next.index, 0, 0);
      }
      compute(step & 1);
    }
    mbarrier_arrive(&empty[slot.index]);
    slot = next;
  }
}

}  // namespace klab::device

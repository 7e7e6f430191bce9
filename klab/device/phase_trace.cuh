#pragma once
// Phase marks of a kernel's CTAs, read by `klab timeline`: where the time of one launch goes.
// A kernel's traced instantiation (a template flag: the untraced one, the rung that is measured,
// compiles to the same code as before) has one thread of each CTA record, at each of its named
// phases, the SM's cycle counter (clock64: exact, but each SM's own) and the GPU's nanosecond
// clock (%globaltimer: one axis for every SM, at the driver's resolution, which the tool reports).
// Layout of the slots (u64): CTA c's record at c * record_u64(phases): its SM id, then for each
// phase (cycles, ns); phase 0 is the CTA's start. The host zeroes the slots before each launch:
// a phase a CTA never reached reads 0.
//
// The slots reach the kernel through a variable of the translation unit that launches it
// (`phase_trace_slots`, internal linkage: each TU its own), set once by the host before the traced
// launches (set_phase_trace); no kernel signature changes.
#include <cuda_runtime.h>

#include <cstdint>

#include "klab/core/cuda_check.hpp"

namespace klab::device {

/// u64 slots of one CTA's record: the SM id, then (cycles, ns) per phase.
constexpr int64_t phase_record_u64(int phases) { return 1 + 2 * int64_t(phases); }

namespace phase_trace_detail {
// Internal linkage: the TU that instantiates a traced kernel sets and reads its own copy. Two TUs
// that instantiate the same traced kernel (the same template arguments) share one host stub, which
// launches one TU's copy of the kernel: a rung tracing a kernel another rung's file instantiates
// sets its own pointer and the launched kernel reads the other's (`klab timeline` then refuses
// the run: no marks).
static __device__ unsigned long long* phase_trace_slots = nullptr;
}  // namespace phase_trace_detail

/// One CTA's phase marks (kOn: a traced kernel; otherwise empty and free). Constructed at the
/// kernel's first instruction: in a thread that marks, it loads the slots' pointer into a register
/// (first used at the first mark, so nothing before that waits on it, as far as the compiler
/// keeps the load early) and, in the CTA's starting thread, takes phase 0, the start, which the
/// first mark() writes with its own (a start mark that stored at once would wait on that load
/// and delay the kernel's own first loads by a round trip).
template <int kPhases, bool kOn>
struct PhaseTrace {
  __device__ PhaseTrace(bool, bool) {}
  __device__ void mark(int) {}
};
template <int kPhases>
struct PhaseTrace<kPhases, true> {
  unsigned long long* slots = nullptr;
  unsigned long long start_cycles = 0, start_ns = 0;
  bool start_written = false;

  /// marks: a thread that marks phases (the others take no clock and load nothing); starts: the
  /// one of them that writes the CTA's start and SM (others mark phases of their own, e.g. a
  /// producer warp's first copy).
  __device__ PhaseTrace(bool marks, bool starts) {
    if (marks) {
      slots = phase_trace_detail::phase_trace_slots;
      start_cycles = now_cycles();
      start_ns = now_ns();
      start_written = !starts;
    }
  }

  static __device__ unsigned long long now_cycles() {
    unsigned long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
  }
  static __device__ unsigned long long now_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
  }
  /// Records phase `phase` (> 0) of this CTA.
  __device__ void mark(int phase) {
    const unsigned long long ns = now_ns(), cycles = now_cycles();
    if (slots == nullptr) return;
    const unsigned long long cta =
        blockIdx.x +
        gridDim.x * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
    unsigned long long* rec = slots + cta * phase_record_u64(kPhases);
    if (!start_written) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      rec[0] = sm;
      rec[1] = start_cycles;
      rec[2] = start_ns;
      start_written = true;
    }
    rec[1 + 2 * phase] = cycles;
    rec[2 + 2 * phase] = ns;
  }
};

/// Points this TU's traced kernels at `slots` (device memory; null: tracing off). Host side, once
/// before the traced launches (synchronous).
static inline void set_phase_trace(unsigned long long* slots) {
  KLAB_CUDA_CHECK(cudaMemcpyToSymbol(phase_trace_detail::phase_trace_slots, &slots, sizeof(slots)));
}

}  // namespace klab::device

#pragma once
// Flags between the CTAs of one launch in global memory: a counter that writers bump after a
// __threadfence() (their stores before it, device-wide) and one reader waits on with acquire
// loads, so that the writers' stores are visible to it (and, through a block barrier, to its
// block) once the count is reached. Only where every CTA of the grid is resident: a wait on a
// CTA that never runs would not end.

namespace klab::device {

/// An acquire load of a 32-bit counter at GPU scope (ld.acquire.gpu).
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// Spins (with short sleeps) until the counter at p reaches `count`; acquire on the last load.
__device__ __forceinline__ void wait_count_at_least(const int* p, int count) {
  while (ld_acquire_gpu(p) < count) __nanosleep(64);
}

}  // namespace klab::device

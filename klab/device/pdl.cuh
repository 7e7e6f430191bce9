#pragma once
// Programmatic dependent launch (sm_90): a kernel launched with the programmatic stream
// serialization attribute may start while the kernel before it in the stream is still running.
// It must call grid_dependency_wait() before it reads anything that kernel (or any before it)
// wrote, or writes anything they read: the wait returns once they have completed and their
// memory is visible. Work before the wait touches only the kernel's own inputs that nothing
// before it writes (a GEMM's weights). allow_dependent_launch() lets the next kernel's blocks be
// scheduled as soon as every block of this one has called it (or exited); without it they wait
// for this kernel's end. Launched without the attribute (launch_attributes.hpp), both are no-ops.
#include <cuda_runtime.h>

namespace klab::device {

__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace klab::device

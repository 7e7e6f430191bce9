#include "klab/core/cuda_check.hpp"
#include "klab/harness/blocking_kernel.hpp"

namespace klab {

namespace {

// Spins on a host-mapped flag; gives up after kTimeoutNs so that a launch that waits on the host
// (a bug the bench then reports) cannot hang the process.
constexpr unsigned long long kTimeoutNs = 10'000'000'000ULL;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void block_kernel(const volatile int* flag, volatile int* timed_out) {
  const unsigned long long t0 = global_ns();
  while (*flag == 0) {
    if (global_ns() - t0 > kTimeoutNs) {
      *timed_out = 1;
      return;
    }
  }
}

}  // namespace

StreamBlocker::StreamBlocker() {
  void* p = nullptr;
  KLAB_CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = flag_ + 1;
  flag_[0] = 1;
  timed_out_[0] = 0;
}

StreamBlocker::~StreamBlocker() {
  flag_[0] = 1;
  cudaFreeHost(const_cast<int*>(flag_));
}

void StreamBlocker::block(cudaStream_t stream) {
  flag_[0] = 0;
  timed_out_[0] = 0;
  int* dflag = nullptr;
  int* dtimeout = nullptr;
  KLAB_CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), const_cast<int*>(flag_), 0));
  KLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dtimeout),
                                           const_cast<int*>(timed_out_), 0));
  block_kernel<<<1, 1, 0, stream>>>(dflag, dtimeout);
  KLAB_CHECK_LAUNCH();
}

void StreamBlocker::release() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  flag_[0] = 1;
}

bool StreamBlocker::timed_out() const { return timed_out_[0] != 0; }

}  // namespace klab

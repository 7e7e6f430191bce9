#include "klab/core/cuda_memory.hpp"

#include "klab/core/cuda_check.hpp"

namespace klab {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) KLAB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) KLAB_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) KLAB_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

CudaStream::CudaStream() { KLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
CudaStream::~CudaStream() { KLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_)); }

CudaEvent::CudaEvent() { KLAB_CUDA_CHECK(cudaEventCreate(&e_)); }
CudaEvent::~CudaEvent() { KLAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e_)); }

float elapsed_ms(const CudaEvent& start, const CudaEvent& stop) {
  KLAB_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  KLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

}  // namespace klab

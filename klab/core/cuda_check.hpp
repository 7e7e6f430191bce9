#pragma once
// CUDA and cuBLAS error checks (CUDA builds only). Host-compiler safe: uses the runtime API header.
#include <cuda_runtime_api.h>

#include <string>

#include "klab/core/errors.hpp"

namespace klab::detail {
[[noreturn]] void throw_cuda(const char* file, int line, const char* call, cudaError_t err);
[[noreturn]] void throw_cublas(const char* file, int line, const char* call, int status);
void warn_cuda(const char* file, int line, const char* call, cudaError_t err) noexcept;
bool debug_sync_enabled();
}  // namespace klab::detail

/// Throws klab::Error carrying file, line, the call text and CUDA's error string.
#define KLAB_CUDA_CHECK(call)                                           \
  do {                                                                  \
    const cudaError_t klab_err_ = (call);                               \
    if (klab_err_ != cudaSuccess)                                       \
      ::klab::detail::throw_cuda(__FILE__, __LINE__, #call, klab_err_); \
  } while (0)

/// For destructors: reports to stderr instead of throwing.
#define KLAB_CUDA_CHECK_NOEXCEPT(call)                                                             \
  do {                                                                                             \
    const cudaError_t klab_err_ = (call);                                                          \
    if (klab_err_ != cudaSuccess) ::klab::detail::warn_cuda(__FILE__, __LINE__, #call, klab_err_); \
  } while (0)

/// After every kernel launch: peek at the launch error; with KLAB_DEBUG_SYNC=1 also synchronise.
#define KLAB_CHECK_LAUNCH()                                                             \
  do {                                                                                  \
    KLAB_CUDA_CHECK(cudaPeekAtLastError());                                             \
    if (::klab::detail::debug_sync_enabled()) KLAB_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)

/// cuBLAS status check (status 0 is CUBLAS_STATUS_SUCCESS).
#define KLAB_CUBLAS_CHECK(call)                                                           \
  do {                                                                                    \
    const int klab_st_ = static_cast<int>(call);                                          \
    if (klab_st_ != 0) ::klab::detail::throw_cublas(__FILE__, __LINE__, #call, klab_st_); \
  } while (0)

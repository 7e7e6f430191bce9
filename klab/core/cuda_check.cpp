#include "klab/core/cuda_check.hpp"

#include <cstdio>
#include <cstdlib>

namespace klab::detail {

void throw_cuda(const char* file, int line, const char* call, cudaError_t err) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call +
              " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void throw_cublas(const char* file, int line, const char* call, int status) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call +
              " failed: cuBLAS status " + std::to_string(status));
}

void warn_cuda(const char* file, int line, const char* call, cudaError_t err) noexcept {
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, cudaGetErrorName(err));
}

bool debug_sync_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("KLAB_DEBUG_SYNC");
    return v != nullptr && v[0] == '1';
  }();
  return enabled;
}

}  // namespace klab::detail

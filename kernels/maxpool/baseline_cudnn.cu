// Baseline: cuDNN's cudnnPoolingForward (CUDNN_POOLING_MAX, NCHW) — the library call a CUDA
// programmer would reach for. cuDNN's max pooling never picks a padded cell (padding acts as
// -inf), the same semantics as the family's reference.
// The handle is created once, lazily (on the warm-up launch), and bound to the caller's stream on
// every launch; descriptors are built once per problem and cached, so a timed launch does only
// host-side lookups and one enqueue: no allocation, no synchronisation.
// Expected bottleneck: DRAM bandwidth; cuDNN's legacy pooling kernels are generic over k, s and p,
// so predicted near v02 (~80-90% of the copy ceiling), not above it.
// Requirements: int extents (cuDNN's legacy descriptors take int); < 2^31 elements per tensor.
#include <cudnn.h>

#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "kernels/maxpool/rung.cuh"
#include "klab/core/cudnn_check.hpp"

namespace klab::maxpool {

namespace {

// Created on first use and never destroyed: cudnnDestroy at static-destruction time may run
// after the CUDA context is gone.
cudnnHandle_t cudnn_handle() {
  static const cudnnHandle_t handle = [] {
    cudnnHandle_t h = nullptr;
    KLAB_CUDNN_CHECK(cudnnCreate(&h));
    return h;
  }();
  return handle;
}

// The descriptors of one problem (host objects only: creating them allocates no device memory).
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {  // host-only teardown, safe at exit; errors are ignored
    if (pool) cudnnDestroyPoolingDescriptor(pool);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
};

void build(Descriptors& d, const Problem& p) {
  const Geometry g = geometry(p);
  const cudnnDataType_t t = p.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  KLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.x));
  KLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.y));
  KLAB_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d.pool));
  KLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, t, int(g.n), int(g.c),
                                              int(g.h), int(g.w)));
  // NOT_PROPAGATE_NAN matches fmaxf in the rungs; the test data hold no NaN either way.
  KLAB_CUDNN_CHECK(cudnnSetPooling2dDescriptor(d.pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN,
                                               int(g.k), int(g.k), int(g.p), int(g.p), int(g.s),
                                               int(g.s)));
  int n = 0, c = 0, ho = 0, wo = 0;
  KLAB_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(d.pool, d.x, &n, &c, &ho, &wo));
  KLAB_CHECK(n == g.n && c == g.c && ho == g.ho && wo == g.wo,
             "cuDNN's pooled shape differs from the family's for " + p.str());
  KLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, t, n, c, ho, wo));
}

const Descriptors& descriptors(const Problem& p) {
  static std::mutex mu;
  static std::map<std::string, Descriptors> cache;  // by p.str(): shape and dtype
  const std::lock_guard<std::mutex> lock(mu);
  const std::string key = p.str();
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.try_emplace(key).first;
    try {
      build(it->second, p);
    } catch (...) {
      cache.erase(it);
      throw;
    }
  }
  return it->second;
}

}  // namespace

Variant gpu_baseline_cudnn() {
  Variant v = gpu_variant(
      "baseline_cudnn", "cudnnPoolingForward (CUDNN_POOLING_MAX, NCHW)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const Descriptors& d = descriptors(p);
        const cudnnHandle_t h = cudnn_handle();
        KLAB_CUDNN_CHECK(cudnnSetStream(h, stream_of(args)));
        const float one = 1.f, zero = 0.f;  // float scaling factors for f32 and bf16 data alike
        KLAB_CUDNN_CHECK(
            cudnnPoolingForward(h, d.pool, &one, d.x, b["x"].data, &zero, d.y, b["y"].data));
        KLAB_CHECK_LAUNCH();
      });
  v.info.baseline = true;
  v.info.sweepable = false;
  v.can_implement = [](const Problem& p) {
    const Geometry g = geometry(p);
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (g.x_numel() > kMax || g.y_numel() > kMax)
      return Status::no(
          "cuDNN's legacy pooling takes int extents: needs < 2^31 elements per tensor");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::maxpool

// Baseline: cuDNN's cudnnSoftmaxForward (CUDNN_SOFTMAX_ACCURATE: max-subtracted;
// CUDNN_SOFTMAX_MODE_INSTANCE over an NCHW tensor of N = rows, C = cols, H = W = 1, i.e. one
// softmax per row), f32. With beta = 0 cuDNN does not read y (the NaN poison stays harmless).
// The handle and one tensor descriptor are created once, lazily (on the warm-up launch), never
// destroyed (cudnnDestroy at static-destruction time may run after the CUDA context is gone);
// the descriptor is re-set (host only) when the shape changes, and the handle is bound to the
// caller's stream on every launch: no allocation, no synchronisation in a timed launch.
// Requirements: f32; rows, cols and rows x cols below 2^31 (cuDNN's legacy descriptors take int).
#include <cudnn.h>

#include <climits>
#include <string>

#include "kernels/reduction/softmax/rung.cuh"
#include "klab/core/cudnn_check.hpp"

namespace klab::reduction {

namespace {

struct CudnnSoftmax {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t desc = nullptr;  // (rows, cols, 1, 1) NCHW f32, for x and y alike
  int64_t rows = -1, cols = -1;            // the shape `desc` describes
};

CudnnSoftmax& cudnn_softmax() {
  static CudnnSoftmax s = [] {
    CudnnSoftmax c;
    KLAB_CUDNN_CHECK(cudnnCreate(&c.handle));
    KLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&c.desc));
    return c;
  }();
  return s;
}

}  // namespace

Variant softmax_baseline_cudnn() {
  Variant v = softmax_variant(
      "baseline_cudnn", "cudnnSoftmaxForward, ACCURATE, MODE_INSTANCE (cuDNN)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        CudnnSoftmax& c = cudnn_softmax();
        const int64_t rows = p.dim("rows"), cols = p.dim("cols");
        if (rows != c.rows || cols != c.cols) {
          KLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(c.desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                      static_cast<int>(rows),
                                                      static_cast<int>(cols), 1, 1));
          c.rows = rows;
          c.cols = cols;
        }
        const float one = 1.f, zero = 0.f;
        KLAB_CUDNN_CHECK(cudnnSetStream(c.handle, stream_of(args)));
        KLAB_CUDNN_CHECK(cudnnSoftmaxForward(c.handle, CUDNN_SOFTMAX_ACCURATE,
                                             CUDNN_SOFTMAX_MODE_INSTANCE, &one, c.desc, b["x"].data,
                                             &zero, c.desc, b["y"].data));
        KLAB_CHECK_LAUNCH();
      });
  v.info.dtypes = {DType::f32};
  v.info.baseline = true;
  v.can_implement = [](const Problem& p) {
    if (p.dim("rows") > INT_MAX || p.dim("cols") > INT_MAX ||
        p.dim("rows") * p.dim("cols") > INT_MAX)
      return Status::no(
          "cuDNN's legacy tensor descriptors take int extents and fewer than 2^31 elements");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::reduction

// Baseline: cublasSgeam (C = alpha op(A) + beta op(B)) with op(A) = A^T, alpha = 1, beta = 0 —
// the vendor call for an out-of-place f32 transpose. cuBLAS is column-major: our row-major
// (rows, cols) input is a column-major (cols, rows) matrix with lda = cols, and our (cols, rows)
// output a column-major (rows, cols) matrix with ldc = rows.
// B is passed as C (geam's documented in-place form C = alpha op(A) + beta C, ldb = ldc, no op on
// B); with beta = 0 cuBLAS does not read it — if it did, the NaN poison in the output would fail
// the check.
// The handle is created once, lazily (on the warm-up launch), never destroyed (destroying it at
// static-destruction time can run after the CUDA context is gone), and bound to the caller's
// stream on every launch. geam needs no workspace: no allocation, no synchronisation.
// Requirements: f32; rows and cols fit in int (cuBLAS's int API).
#include <cublas_v2.h>

#include <climits>

#include "kernels/transpose/rung.cuh"

namespace klab::transpose {

namespace {

cublasHandle_t cublas_handle() {
  static const cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    KLAB_CUBLAS_CHECK(cublasCreate(&h));
    return h;
  }();
  return handle;
}

}  // namespace

Variant gpu_baseline_cublas() {
  Variant v = gpu_variant(
      "baseline_cublas", "cublasSgeam with op(A) = A^T (cuBLAS)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int rows = static_cast<int>(p.dim("rows")), cols = static_cast<int>(p.dim("cols"));
        const float one = 1.f, zero = 0.f;
        float* out = b.ptr<float>("out");
        cublasHandle_t h = cublas_handle();
        KLAB_CUBLAS_CHECK(cublasSetStream(h, stream_of(args)));
        KLAB_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                                      b.ptr<const float>("in"), cols, &zero, out, rows, out, rows));
        KLAB_CHECK_LAUNCH();
      });
  v.info.dtypes = {DType::f32};
  v.info.baseline = true;
  v.can_implement = [](const Problem& p) {
    if (p.dim("rows") > INT_MAX || p.dim("cols") > INT_MAX)
      return Status::no("cuBLAS takes int extents");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::transpose

// Baseline: cuBLAS SGEMM (cublasSgemm), FP32 in and out with FP32 FFMA math — TF32 off — the
// library call a CUDA programmer would make instead of this ladder, and the reference for
// problems too large for the CPU one.
// Row-major through the column-major API: a row-major M x N matrix is its column-major
// transpose, so C^T = B^T A^T is a column-major GEMM of shape (n, m, k) with B first, no
// transposes, leading dimensions n, k, n.
// TF32 stays off: the handle's math mode is CUBLAS_DEFAULT_MATH, which only allows compute types
// with at least FP32's mantissa (TF32 tensor cores need CUBLAS_TF32_TENSOR_OP_MATH; the
// NVIDIA_TF32_OVERRIDE variable can only turn TF32 off). This is what PyTorch runs with
// allow_tf32 = False — the FP32 baseline of docs/design.md's targets. (CUBLAS_PEDANTIC_MATH would also forbid
// TF32, but may pick slower kernels: not the baseline a user gets.)
#include <cublas_v2.h>

#include "kernels/sgemm/rung.cuh"

namespace klab::sgemm {

namespace {

// cuBLAS's workspace comes from the harness (Variant::workspace_bytes), so no launch allocates;
// 32 MiB is what NVIDIA recommends for Hopper.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

// Created on the first launch (the harness warms up before timing), never destroyed: a static
// destructor would run after the CUDA context is gone.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    KLAB_CUBLAS_CHECK(cublasCreate(&created));
    KLAB_CUBLAS_CHECK(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH));
    return created;
  }();
  return h;
}

void launch_cublas(const Problem& p, Buffers& b, const LaunchArgs& args) {
  const GemmArgs g = gemm_args(p, b);
  cublasHandle_t h = handle();
  KLAB_CUBLAS_CHECK(cublasSetStream(h, stream_of(args)));
  // After cublasSetStream (which resets the workspace to cuBLAS's default pool).
  KLAB_CUBLAS_CHECK(cublasSetWorkspace(h, b.workspace, b.workspace_bytes));
  KLAB_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &g.alpha, g.b, g.n, g.a,
                                g.k, &g.beta, g.c, g.n));
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_baseline_cublas() {
  Variant v =
      gpu_variant("baseline_cublas", "cublasSgemm, FP32 (TF32 off), row-major via C^T = B^T A^T",
                  launch_cublas, {});
  v.workspace_bytes = [](const Problem&) { return kWorkspaceBytes; };
  v.info.baseline = true;
  return v;
}

}  // namespace klab::sgemm

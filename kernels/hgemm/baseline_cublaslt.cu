// Baseline: cuBLASLt (cublasLtMatmul), bf16/f16 in and out, fp32 compute (CUBLAS_COMPUTE_32F),
// the library a CUDA programmer would call instead; on sm_90 its kernels use wgmma + TMA.
// Row-major C = A @ B is column-major C^T = B^T @ A^T: we hand cuBLASLt B as its "A" (n x k,
// ld n) and A as its "B" (k x m, ld k), both untransposed, and C as (n x m, ld n).
// The heuristic's first algorithm is chosen once per (shape, dtype, pointer alignment) and
// cached with its descriptors; the handle is created on first use and lives for the process.
// Scratch comes from Buffers::workspace (kWorkspaceBytes): launch allocates nothing, syncs nothing.
// `prepare` looks the plan up once; its launch only enqueues cublasLtMatmul. Also the second
// opinion beside the fp64 samples at problems too large for the whole CPU reference
// (Family::gpu_reference_variant).
#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "kernels/hgemm/rung.cuh"

namespace klab::hgemm {

namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

cublasLtHandle_t handle() {
  // Never destroyed: destroying it from a static destructor could run after the CUDA runtime
  // has shut down.
  static const cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    KLAB_CUBLAS_CHECK(cublasLtCreate(&x));
    return x;
  }();
  return h;
}

/// The largest power of two (up to 256) dividing the address: cuBLASLt's alignment preference.
uint32_t alignment_of(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && addr % al != 0) al /= 2;
  return al;
}

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr,
                         c = nullptr;  // cuBLASLt's A (our B), B (our A), C
  cublasLtMatmulAlgo_t algo{};
};

// (m, n, k, dtype, alignment of our A, B, C, workspace bytes)
using Key = std::tuple<int, int, int, int, uint32_t, uint32_t, uint32_t, size_t>;

template <class T>
const Plan& plan_for(const GemmArgs<T>& g, size_t workspace_bytes) {
  constexpr cudaDataType_t kType = std::is_same_v<T, __nv_bfloat16> ? CUDA_R_16BF : CUDA_R_16F;
  const uint32_t al_a = alignment_of(g.a), al_b = alignment_of(g.b), al_c = alignment_of(g.c);
  const Key key{g.m, g.n, g.k, static_cast<int>(kType), al_a, al_b, al_c, workspace_bytes};
  static std::mutex mu;
  static std::map<Key, Plan> cache;  // plans live for the process, like the handle
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  Plan p;
  KLAB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t no_trans = CUBLAS_OP_N;
  KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &no_trans,
                                                   sizeof no_trans));
  KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans,
                                                   sizeof no_trans));
  KLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, kType, g.n, g.k, g.n));
  KLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, kType, g.k, g.m, g.k));
  KLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.c, kType, g.n, g.m, g.n));

  cublasLtMatmulPreference_t pref = nullptr;
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = workspace_bytes;
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  // Alignments in cuBLASLt's terms: its A is our B, its B our A; C and D are our C.
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_b, sizeof al_b));
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_a, sizeof al_a));
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c));
  KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle(), p.op, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.c);
    cublasLtMatmulDescDestroy(p.op);
    throw Error("cuBLASLt has no algorithm for hgemm m=" + std::to_string(g.m) +
                ",n=" + std::to_string(g.n) + ",k=" + std::to_string(g.k) + " (" +
                cublasLtGetStatusString(st) + ")");
  }
  p.algo = result.algo;
  return cache.emplace(key, p).first->second;
}

template <class T>
void launch(const GemmArgs<T>& g, Buffers& b, cudaStream_t stream) {
  const Plan& p = plan_for(g, b.workspace_bytes);
  const float alpha = 1.f, beta = 0.f;
  KLAB_CUBLAS_CHECK(cublasLtMatmul(handle(), p.op, &alpha, g.b, p.a, g.a, p.b, &beta, g.c, p.c, g.c,
                                   p.c, &p.algo, b.workspace, b.workspace_bytes, stream));
  KLAB_CHECK_LAUNCH();
}

template <class T>
PreparedLaunch prepare(const GemmArgs<T>& g, Buffers& b) {
  const Plan* p = &plan_for(g, b.workspace_bytes);
  return [g, p, ws = b.workspace, ws_bytes = b.workspace_bytes](Stream s) {
    const float alpha = 1.f, beta = 0.f;
    KLAB_CUBLAS_CHECK(cublasLtMatmul(handle(), p->op, &alpha, g.b, p->a, g.a, p->b, &beta, g.c,
                                     p->c, g.c, p->c, &p->algo, ws, ws_bytes,
                                     reinterpret_cast<cudaStream_t>(s)));
    KLAB_CHECK_LAUNCH();
  };
}

}  // namespace

Variant gpu_baseline_cublaslt() {
  Variant v = gpu_variant(
      "baseline_cublaslt", "cublasLtMatmul, fp32 compute, heuristic algo cached per problem",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) { launch(g, b, stream_of(args)); });
      });
  v.info.baseline = true;
  v.workspace_bytes = [](const Problem&) { return kWorkspaceBytes; };
  v.prepare = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    PreparedLaunch out;
    with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) { out = prepare(g, b); });
    return out;
  };
  return v;
}

}  // namespace klab::hgemm

// sgemm.baseline_openblas: cblas_sgemm from OpenBLAS, the fair CPU baseline (same precision,
// row-major, same alpha and beta). Loaded at run time with dlopen, never linked: klab starts on
// machines without OpenBLAS, and there this rung says why it cannot run. It uses thread_count()
// threads (openblas_set_num_threads before each call), like the cpuNN rungs.
#include <dlfcn.h>

#include <string>

#include "kernels/cpu/ladder.hpp"
#include "kernels/cpu/threads.hpp"
#include "kernels/sgemm/family.hpp"

namespace klab::cpu {

namespace {

// cblas.h's values (CBLAS_ORDER, CBLAS_TRANSPOSE) and cblas_sgemm's signature, declared here so
// that no OpenBLAS header or library is needed to build. blasint is int in the LP64 library
// (libopenblas.so.0); the ILP64 build is a different soname (libopenblas64_.so.0).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const float* a, int lda, const float* b, int ldb, float beta, float* c,
                            int ldc);
using OpenblasSetNumThreads = void (*)(int threads);

struct OpenBlas {
  CblasSgemm sgemm = nullptr;
  OpenblasSetNumThreads set_num_threads = nullptr;  // optional
  std::string error;                                // why it is not usable (empty: usable)
};

// Opened once, on first use, and kept for the life of the process.
const OpenBlas& openblas() {
  static const OpenBlas lib = [] {
    OpenBlas o;
    void* handle = nullptr;
    std::string tried;
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      const char* e = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    if (!handle) {
      o.error = "OpenBLAS not loadable (" + tried + ")";
      return o;
    }
    o.sgemm = reinterpret_cast<CblasSgemm>(dlsym(handle, "cblas_sgemm"));
    o.set_num_threads =
        reinterpret_cast<OpenblasSetNumThreads>(dlsym(handle, "openblas_set_num_threads"));
    if (!o.sgemm) o.error = "libopenblas has no cblas_sgemm";
    return o;
  }();
  return lib;
}

}  // namespace

Variant gemm_baseline_openblas() {
  Variant v = cpu_variant("sgemm.baseline_openblas",
                          "OpenBLAS cblas_sgemm (dlopen'ed at run time), thread_count() threads",
                          {DType::f32}, /*baseline=*/true);
  v.can_implement = [](const Problem&) {
    const OpenBlas& o = openblas();
    return o.error.empty() ? Status::yes() : Status::no(o.error);
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const OpenBlas& o = openblas();
    if (o.set_num_threads) o.set_num_threads(thread_count());
    // sgemm's validate() keeps every dimension and product below 2^31: the int casts are exact.
    const int m = static_cast<int>(p.dim("m")), n = static_cast<int>(p.dim("n")),
              k = static_cast<int>(p.dim("k"));
    o.sgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, sgemm::kAlpha, b.ptr<float>("a"),
            k, b.ptr<float>("b"), n, sgemm::kBeta, b.ptr<float>("c"), n);
  };
  return v;
}

}  // namespace klab::cpu

#pragma once
// The CPU ladder: the same five steps for vector_add, reduce_sum and sgemm, each rung adding one
// technique to the one before it:
//   cpu01_scalar        one thread, one element per instruction (auto-vectorisation off)
//   cpu02_threads       the scalar loop split across std::threads (thread_count() of them)
//   cpu03_openmp        the scalar loop under `#pragma omp parallel for` (same partition, runtime
//                       thread pool instead of threads started per launch)
//   cpu04_simd          one thread, Highway SIMD (dynamic dispatch: the best ISA of this CPU);
//                       for sgemm also cache blocking, packing and a register-tile micro-kernel
//   cpu05_threads_simd  cpu04 on every thread
//   sgemm.baseline_openblas  cblas_sgemm from libopenblas.so.0, loaded at run time
// cpu::ladder(family) (register.cpp) lists them; each family's registration places them after its
// own CPU rung.
#include <string>
#include <string_view>
#include <vector>

#include "klab/harness/family.hpp"

// The scalar rungs stay scalar: the auto-vectoriser would otherwise turn their plain loops into
// SSE code and hide the step the SIMD rung takes. GCC: a function attribute (GCC 12 has no loop
// pragma); Clang: a loop pragma.
#if defined(__clang__)
#define KLAB_NO_AUTOVEC
#define KLAB_NO_AUTOVEC_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#elif defined(__GNUC__)
#define KLAB_NO_AUTOVEC __attribute__((optimize("no-tree-vectorize")))
#define KLAB_NO_AUTOVEC_LOOP
#else
#define KLAB_NO_AUTOVEC
#define KLAB_NO_AUTOVEC_LOOP
#endif

namespace klab::cpu {

/// The CPU ladder of `family` (vector_add, reduce_sum, sgemm), in order; empty for the others.
std::vector<Variant> ladder(std::string_view family);

/// The rungs that run on one thread whatever thread_count() says (cpu01_scalar, cpu04_simd).
inline bool single_threaded(std::string_view id) {
  return id.ends_with(".cpu01_scalar") || id.ends_with(".cpu04_simd");
}

/// A CPU rung's common fields (device cpu, min_sm 0).
inline Variant cpu_variant(std::string id, std::string summary, std::vector<DType> dtypes,
                           bool baseline = false) {
  Variant v;
  v.info.id = std::move(id);
  v.info.summary = std::move(summary);
  v.info.min_sm = 0;
  v.info.dtypes = std::move(dtypes);
  v.info.baseline = baseline;
  v.info.device = Device::cpu;
  return v;
}

// vector_add (vector_add.cpp): out = a + b, f32.
Variant add_cpu01_scalar();
Variant add_cpu02_threads();
Variant add_cpu03_openmp();
Variant add_cpu04_simd();
Variant add_cpu05_threads_simd();

// reduce_sum (reduce_sum.cpp): sum = x[0] + ... + x[n-1], f32 in, fp32 accumulation.
Variant sum_cpu01_scalar();
Variant sum_cpu02_threads();
Variant sum_cpu03_openmp();
Variant sum_cpu04_simd();
Variant sum_cpu05_threads_simd();

// sgemm (sgemm.cpp, baseline_openblas.cpp): C = alpha A @ B + beta C, row-major f32.
Variant gemm_cpu01_scalar();
Variant gemm_cpu02_threads();
Variant gemm_cpu03_openmp();
Variant gemm_cpu04_simd();
Variant gemm_cpu05_threads_simd();
Variant gemm_baseline_openblas();

}  // namespace klab::cpu

// The CPU ladder of each family that has one, in order: each family's registration puts these
// rungs after its own CPU rung and before its GPU rungs (kernels/elementwise, kernels/reduction,
// kernels/sgemm register.cpp).
#include "kernels/cpu/ladder.hpp"

namespace klab::cpu {

std::vector<Variant> ladder(std::string_view family) {
  std::vector<Variant (*)()> rungs;
  if (family == "vector_add")
    rungs = {add_cpu01_scalar, add_cpu02_threads, add_cpu03_openmp, add_cpu04_simd,
             add_cpu05_threads_simd};
  else if (family == "reduce_sum")
    rungs = {sum_cpu01_scalar, sum_cpu02_threads, sum_cpu03_openmp, sum_cpu04_simd,
             sum_cpu05_threads_simd};
  else if (family == "sgemm")
    rungs = {gemm_cpu01_scalar, gemm_cpu02_threads,      gemm_cpu03_openmp,
             gemm_cpu04_simd,   gemm_cpu05_threads_simd, gemm_baseline_openblas};
  std::vector<Variant> out;
  for (auto make : rungs) out.push_back(make());
  return out;
}

}  // namespace klab::cpu

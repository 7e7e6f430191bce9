// The CPU ladder, in order, added to families registered before it (kernels/register_all.cpp
// calls this last). Each rung goes after the family's existing CPU rungs, before its GPU rungs.
#include <algorithm>
#include <initializer_list>

#include "kernels/cpu/ladder.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_cpu_ladders(Registry& r) {
  using namespace cpu;
  auto add = [&r](const char* family, std::initializer_list<Variant (*)()> rungs) {
    // A family this binary does not have (not built yet, or left out) simply gets no CPU rungs.
    const auto& fams = r.families();
    if (std::none_of(fams.begin(), fams.end(), [&](const Family& f) { return f.name == family; }))
      return;
    for (auto make : rungs) r.add_variant(family, make());
  };
  add("vector_add", {
                        add_cpu01_scalar,
                        add_cpu02_threads,
                        add_cpu03_openmp,
                        add_cpu04_simd,
                        add_cpu05_threads_simd,
                    });
  add("reduce_sum", {
                        sum_cpu01_scalar,
                        sum_cpu02_threads,
                        sum_cpu03_openmp,
                        sum_cpu04_simd,
                        sum_cpu05_threads_simd,
                    });
  add("sgemm", {
                   gemm_cpu01_scalar,
                   gemm_cpu02_threads,
                   gemm_cpu03_openmp,
                   gemm_cpu04_simd,
                   gemm_cpu05_threads_simd,
                   gemm_baseline_openblas,
               });
}

}  // namespace klab

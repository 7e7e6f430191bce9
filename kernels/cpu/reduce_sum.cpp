// reduce_sum on the CPU: one fp32 sum of n f32 values (the family's tensors "x" and "sum").
// Memory-bound (4 bytes per add) once vectorised; the scalar loop is latency-bound instead: one
// fp32 add chain, one add per 3-4 cycles, so SIMD (and its four independent accumulators) is the
// big step here, unlike vector_add.
// Accuracy: every rung sums in fp32. A chain of length L has worst-case error L u sum|x_i|; for
// the zero-mean test data the partial sums grow like sqrt(i) and the rounding errors are
// independent, so even the scalar rung's single chain of n stays near u sum|x_i|, inside the
// family's tolerance (4 u (log2 n + 1) sum|x_i|). Thread partial sums are added in thread order,
// so a result is reproducible for a given thread count.
#include <vector>

#include "kernels/cpu/ladder.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/threads.hpp"

namespace klab::cpu {

namespace {

constexpr int64_t kMinPerThread = int64_t(1) << 16;

KLAB_NO_AUTOVEC float sum_scalar(const float* x, int64_t begin, int64_t end) {
  float s = 0.f;
  KLAB_NO_AUTOVEC_LOOP
  for (int64_t i = begin; i < end; ++i) s += x[i];
  return s;
}

KLAB_NO_AUTOVEC float sum_openmp(const float* x, int64_t n, int threads) {
  float total = 0.f;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) total += x[i];
  return total;
}

// Partial sums on `threads` std::threads, added in thread order. `range_sum` sums [begin, end).
template <class RangeSum>
float sum_threads(const float* x, int64_t n, RangeSum range_sum) {
  const int threads = threads_for(n, kMinPerThread);
  std::vector<float> partial(static_cast<size_t>(threads));  // `threads` floats: negligible
  run_threads(threads, [&](int t) {
    const Range r = split(n, threads, t, 16);
    partial[static_cast<size_t>(t)] = range_sum(x, r.begin, r.end);
  });
  float total = 0.f;
  for (float s : partial) total += s;
  return total;
}

}  // namespace

Variant sum_cpu01_scalar() {
  Variant v = cpu_variant("reduce_sum.cpu01_scalar", "plain loop, one thread, one fp32 add chain",
                          {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    *b.ptr<float>("sum") = sum_scalar(b.ptr<float>("x"), 0, p.dim("n"));
  };
  return v;
}

Variant sum_cpu02_threads() {
  Variant v =
      cpu_variant("reduce_sum.cpu02_threads",
                  "scalar partial sums on std::thread ranges, added in order", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    *b.ptr<float>("sum") = sum_threads(b.ptr<float>("x"), p.dim("n"), sum_scalar);
  };
  return v;
}

Variant sum_cpu03_openmp() {
  Variant v = cpu_variant("reduce_sum.cpu03_openmp",
                          "the scalar loop under omp parallel for reduction(+)", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const int64_t n = p.dim("n");
    *b.ptr<float>("sum") = sum_openmp(b.ptr<float>("x"), n, threads_for(n, kMinPerThread));
  };
  return v;
}

Variant sum_cpu04_simd() {
  Variant v = cpu_variant("reduce_sum.cpu04_simd",
                          std::string("Highway SIMD, four vector accumulators, one thread (") +
                              simd::target_name() + " here)",
                          {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    *b.ptr<float>("sum") = simd::sum_f32(b.ptr<float>("x"), p.dim("n"));
  };
  return v;
}

Variant sum_cpu05_threads_simd() {
  Variant v =
      cpu_variant("reduce_sum.cpu05_threads_simd",
                  "cpu04's SIMD sum on each std::thread range, added in order", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    *b.ptr<float>("sum") =
        sum_threads(b.ptr<float>("x"), p.dim("n"), [](const float* x, int64_t begin, int64_t end) {
          return simd::sum_f32(x + begin, end - begin);
        });
  };
  return v;
}

}  // namespace klab::cpu

// vector_add on the CPU: out = a + b in f32. Memory-bound (12 bytes per add): the SIMD step
// matters little once the data come from DRAM; threads matter as long as one core cannot
// saturate the memory system (it cannot: one core's outstanding misses limit it to a fraction).
#include "kernels/cpu/ladder.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/threads.hpp"

namespace klab::cpu {

namespace {

// Below this many elements per thread, starting a thread costs more than it saves (~10 us).
constexpr int64_t kMinPerThread = int64_t(1) << 16;
// Range boundaries on whole 64-byte lines, so no two threads write the same line.
constexpr int64_t kLineFloats = 16;

struct Args {
  const float* a;
  const float* b;
  float* out;
  int64_t n;
};

Args args_of(const Problem& p, Buffers& b) {
  return {b.ptr<float>("a"), b.ptr<float>("b"), b.ptr<float>("out"), p.dim("n")};
}

KLAB_NO_AUTOVEC void add_scalar(const float* a, const float* b, float* out, int64_t begin,
                                int64_t end) {
  KLAB_NO_AUTOVEC_LOOP
  for (int64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
}

KLAB_NO_AUTOVEC void add_openmp(const float* a, const float* b, float* out, int64_t n,
                                int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace

Variant add_cpu01_scalar() {
  Variant v = cpu_variant("vector_add.cpu01_scalar",
                          "plain loop, one thread, auto-vectorisation off", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Args x = args_of(p, b);
    add_scalar(x.a, x.b, x.out, 0, x.n);
  };
  return v;
}

Variant add_cpu02_threads() {
  Variant v =
      cpu_variant("vector_add.cpu02_threads",
                  "the scalar loop cut into thread_count() std::thread ranges", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Args x = args_of(p, b);
    const int threads = threads_for(x.n, kMinPerThread);
    run_threads(threads, [&](int t) {
      const Range r = split(x.n, threads, t, kLineFloats);
      add_scalar(x.a, x.b, x.out, r.begin, r.end);
    });
  };
  return v;
}

Variant add_cpu03_openmp() {
  Variant v = cpu_variant("vector_add.cpu03_openmp",
                          "the scalar loop under omp parallel for (static schedule)", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Args x = args_of(p, b);
    add_openmp(x.a, x.b, x.out, x.n, threads_for(x.n, kMinPerThread));
  };
  return v;
}

Variant add_cpu04_simd() {
  Variant v = cpu_variant(
      "vector_add.cpu04_simd",
      std::string("Highway SIMD, one thread (") + simd::target_name() + " here)", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Args x = args_of(p, b);
    simd::add_f32(x.a, x.b, x.out, x.n);
  };
  return v;
}

Variant add_cpu05_threads_simd() {
  Variant v = cpu_variant("vector_add.cpu05_threads_simd",
                          "cpu04's SIMD loop on each of the std::thread ranges", {DType::f32});
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Args x = args_of(p, b);
    const int threads = threads_for(x.n, kMinPerThread);
    run_threads(threads, [&](int t) {
      const Range r = split(x.n, threads, t, kLineFloats);
      simd::add_f32(x.a + r.begin, x.b + r.begin, x.out + r.begin, r.end - r.begin);
    });
  };
  return v;
}

}  // namespace klab::cpu

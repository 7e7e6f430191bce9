// sgemm on the CPU: C = alpha * A @ B + beta * C, row-major f32 (alpha, beta: sgemm::kAlpha,
// kBeta). Compute-bound: 2mnk flops on 4(mk + kn + 2mn) bytes.
//   cpu01-03: the plain loop in i-k-j order (the inner loop runs along rows of B and C, so it
//             streams; i-j-k would stride B by n floats per multiply), 256-column strips of a
//             row accumulated in fp32 on the stack; a multiply and an add per term (no FMA in the
//             x86-64 baseline ISA). Bound by the loads and stores of acc[] in L1.
//   cpu04-05: the cache-blocked, packed register-tile GEMM of simd.cpp; cpu05 cuts C into a grid
//             of thread_count() rectangles (aligned to the register tile), each computed by one
//             thread with its own packed copies of its rows of A and columns of B.
// Each rung refuses problems that would take it minutes (can_implement says why).
#include <algorithm>
#include <cstdio>

#include "kernels/cpu/ladder.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/threads.hpp"
#include "kernels/sgemm/family.hpp"

namespace klab::cpu {

namespace {

// Columns of a row strip accumulated at once (1 KiB of fp32 on the stack: stays in L1).
constexpr int64_t kStrip = 256;
// Work limits, from conservative rates of 1 GFLOP/s per scalar thread and 20 GFLOP/s per SIMD
// thread: at most ~2 s (scalar) or ~5 s (SIMD) a launch, which a benchmark repeats at least four
// times (three warm-ups) and a check once more beside the fp64 reference.
constexpr double kMaxScalarFlopsPerThread = 2e9;
constexpr double kMaxSimdFlopsPerThread = 1e11;
// Below this many FLOPs per thread, starting a thread costs more than it saves.
constexpr double kMinFlopsPerThread = 4e6;

struct Gemm {
  const float* a;
  const float* b;
  float* c;
  int64_t m, n, k;
};

Gemm gemm_of(const Problem& p, Buffers& b) {
  return {b.ptr<float>("a"), b.ptr<float>("b"), b.ptr<float>("c"),
          p.dim("m"),        p.dim("n"),        p.dim("k")};
}

double flops_of(const Problem& p) {
  return 2.0 * double(p.dim("m")) * double(p.dim("n")) * double(p.dim("k"));
}

// Rows [i0, i1) of C, scalar.
KLAB_NO_AUTOVEC void gemm_rows_scalar(const Gemm& g, int64_t i0, int64_t i1) {
  float acc[kStrip];
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j0 = 0; j0 < g.n; j0 += kStrip) {
      const int64_t w = std::min(kStrip, g.n - j0);
      KLAB_NO_AUTOVEC_LOOP
      for (int64_t j = 0; j < w; ++j) acc[j] = 0.f;
      for (int64_t kk = 0; kk < g.k; ++kk) {
        const float a = g.a[i * g.k + kk];
        const float* brow = g.b + kk * g.n + j0;
        KLAB_NO_AUTOVEC_LOOP
        for (int64_t j = 0; j < w; ++j) acc[j] += a * brow[j];
      }
      float* crow = g.c + i * g.n + j0;
      KLAB_NO_AUTOVEC_LOOP
      for (int64_t j = 0; j < w; ++j) crow[j] = sgemm::kAlpha * acc[j] + sgemm::kBeta * crow[j];
    }
  }
}

KLAB_NO_AUTOVEC void gemm_openmp(const Gemm& g, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < g.m; ++i) gemm_rows_scalar(g, i, i + 1);
}

int gemm_threads(const Problem& p) {
  return static_cast<int>(std::clamp<double>(flops_of(p) / kMinFlopsPerThread, 1, thread_count()));
}

Status flop_limit(const Problem& p, double per_thread, int threads, const char* what) {
  const double limit = per_thread * threads;
  if (flops_of(p) <= limit) return Status::yes();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.2g FLOPs is above this rung's %.2g (%s): it would take minutes",
                flops_of(p), limit, what);
  return Status::no(buf);
}

// A grid of tm x tn rectangles of C for at most `threads` threads: the fewest register-tile units
// on the busiest thread first, then the fewest threads, then the squarest rectangles (each
// thread packs its rows of A and columns of B: rows + cols is its packing cost).
struct Grid {
  int tm = 1, tn = 1;
};

Grid thread_grid(int64_t m, int64_t n, int threads) {
  const int64_t mu = (m + simd::gemm_tile_rows() - 1) / simd::gemm_tile_rows();
  const int64_t nu = (n + simd::gemm_tile_cols() - 1) / simd::gemm_tile_cols();
  Grid best;
  int64_t best_work = mu * nu, best_perimeter = m + n;
  for (int tm = 1; tm <= threads && tm <= mu; ++tm)
    for (int tn = 1; tm * tn <= threads && tn <= nu; ++tn) {
      const int64_t rows = (mu + tm - 1) / tm, cols = (nu + tn - 1) / tn;
      const int64_t work = rows * cols;
      const int64_t perimeter = rows * simd::gemm_tile_rows() + cols * simd::gemm_tile_cols();
      const bool better =
          work < best_work ||
          (work == best_work && (tm * tn < best.tm * best.tn ||
                                 (tm * tn == best.tm * best.tn && perimeter < best_perimeter)));
      if (better) best = {tm, tn}, best_work = work, best_perimeter = perimeter;
    }
  return best;
}

simd::GemmArgs simd_args(const Gemm& g) {
  return {g.a, g.b, g.c, g.m, g.n, g.k, sgemm::kAlpha, sgemm::kBeta};
}

}  // namespace

Variant gemm_cpu01_scalar() {
  Variant v = cpu_variant("sgemm.cpu01_scalar",
                          "plain i-k-j loop, one thread, auto-vectorisation off", {DType::f32});
  v.can_implement = [](const Problem& p) {
    return flop_limit(p, kMaxScalarFlopsPerThread, 1, "one scalar thread");
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Gemm g = gemm_of(p, b);
    gemm_rows_scalar(g, 0, g.m);
  };
  return v;
}

Variant gemm_cpu02_threads() {
  Variant v = cpu_variant("sgemm.cpu02_threads",
                          "the scalar loop, rows of C cut into std::thread ranges", {DType::f32});
  v.can_implement = [](const Problem& p) {
    return flop_limit(p, kMaxScalarFlopsPerThread, thread_count(),
                      "scalar, per thread x thread_count()");
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Gemm g = gemm_of(p, b);
    const int threads = static_cast<int>(std::min<int64_t>(gemm_threads(p), g.m));
    run_threads(threads, [&](int t) {
      const Range r = split(g.m, threads, t);
      gemm_rows_scalar(g, r.begin, r.end);
    });
  };
  return v;
}

Variant gemm_cpu03_openmp() {
  Variant v = cpu_variant("sgemm.cpu03_openmp", "the scalar loop, rows of C under omp parallel for",
                          {DType::f32});
  v.can_implement = [](const Problem& p) {
    return flop_limit(p, kMaxScalarFlopsPerThread, thread_count(),
                      "scalar, per thread x thread_count()");
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Gemm g = gemm_of(p, b);
    gemm_openmp(g, static_cast<int>(std::min<int64_t>(gemm_threads(p), g.m)));
  };
  return v;
}

Variant gemm_cpu04_simd() {
  Variant v =
      cpu_variant("sgemm.cpu04_simd",
                  "cache-blocked, packed, " + std::to_string(simd::gemm_tile_rows()) + "x" +
                      std::to_string(simd::gemm_tile_cols()) + " register tile, Highway SIMD (" +
                      simd::target_name() + " here), one thread",
                  {DType::f32});
  v.can_implement = [](const Problem& p) {
    return flop_limit(p, kMaxSimdFlopsPerThread, 1, "one SIMD thread");
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Gemm g = gemm_of(p, b);
    simd::gemm_block(simd_args(g), 0, g.m, 0, g.n);
  };
  return v;
}

Variant gemm_cpu05_threads_simd() {
  Variant v = cpu_variant("sgemm.cpu05_threads_simd",
                          "cpu04 on a grid of C rectangles, one per std::thread", {DType::f32});
  v.can_implement = [](const Problem& p) {
    return flop_limit(p, kMaxSimdFlopsPerThread, thread_count(),
                      "SIMD, per thread x thread_count()");
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Gemm g = gemm_of(p, b);
    const Grid grid = thread_grid(g.m, g.n, gemm_threads(p));
    run_threads(grid.tm * grid.tn, [&](int t) {
      const Range rows = split(g.m, grid.tm, t / grid.tn, simd::gemm_tile_rows());
      const Range cols = split(g.n, grid.tn, t % grid.tn, simd::gemm_tile_cols());
      simd::gemm_block(simd_args(g), rows.begin, rows.end, cols.begin, cols.end);
    });
  };
  return v;
}

}  // namespace klab::cpu

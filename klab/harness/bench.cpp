#include <algorithm>
#include <chrono>
#include <cmath>

#include "klab/harness/bench.hpp"

namespace klab {

bool bench_should_stop(const std::vector<double>& samples_ms, double measured_s, double wall_s,
                       const BenchConfig& cfg, bool* converged) {
  const int n = static_cast<int>(samples_ms.size());
  if (n >= cfg.min_samples && measured_s >= cfg.min_time_s &&
      summarize(samples_ms).rel_noise <= cfg.target_rel_noise) {
    *converged = true;
    return true;
  }
  *converged = false;
  // Hard stops; never fewer than 3 samples, so that a median exists.
  return n >= 3 && (n >= cfg.max_samples || wall_s >= cfg.max_time_s);
}

std::vector<bool> clock_keep_mask(const std::vector<int>& clock_mhz) {
  const int best = clock_mhz.empty() ? 0 : *std::max_element(clock_mhz.begin(), clock_mhz.end());
  std::vector<bool> keep(clock_mhz.size(), true);
  int kept = 0;
  for (size_t i = 0; i < clock_mhz.size(); ++i) {
    keep[i] = clock_mhz[i] == 0 || clock_mhz[i] >= best * (1 - kClockDropTolerance);
    kept += keep[i];
  }
  if (kept < 3) std::fill(keep.begin(), keep.end(), true);
  return keep;
}

PairedRatio paired_ratio(const std::vector<double>& baseline_round_ms,
                         const std::vector<double>& round_ms) {
  std::vector<double> ratios;
  const size_t n = std::min(baseline_round_ms.size(), round_ms.size());
  for (size_t i = 0; i < n; ++i) {
    const double b = baseline_round_ms[i], v = round_ms[i];
    if (std::isfinite(b) && std::isfinite(v) && b > 0 && v > 0) ratios.push_back(b / v);
  }
  PairedRatio r;
  r.pairs = static_cast<int>(ratios.size());
  if (ratios.empty()) return r;
  r.median = percentile(ratios, 0.5);
  r.p10 = percentile(ratios, 0.1);
  r.p90 = percentile(ratios, 0.9);
  if (r.pairs >= kMinPairsForCi) {
    std::sort(ratios.begin(), ratios.end());
    const double n = static_cast<double>(ratios.size()), h = 1.959964 * std::sqrt(n) / 2;
    r.ci_lo = ratios[static_cast<size_t>(std::max(0.0, std::floor((n - 1) / 2 - h)))];
    r.ci_hi = ratios[static_cast<size_t>(std::min(n - 1, std::ceil((n - 1) / 2 + h)))];
  }
  return r;
}

Timing bench_cpu(const std::function<void()>& run, const BenchConfig& cfg) {
  using clock = std::chrono::steady_clock;
  Timing t;
  t.mode = "cpu";
  t.method = "steady clock around 1 call";
  const auto w0 = clock::now();
  for (int i = 0; i < 3 || std::chrono::duration<double>(clock::now() - w0).count() < cfg.warmup_s;
       ++i)
    run();
  const auto start = clock::now();
  double measured = 0;
  for (;;) {
    const auto a = clock::now();
    run();
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - a).count();
    t.samples_ms.push_back(ms);
    measured += ms / 1e3;
    const double wall = std::chrono::duration<double>(clock::now() - start).count();
    if (bench_should_stop(t.samples_ms, measured, wall, cfg, &t.converged)) break;
  }
  t.stats = summarize(t.samples_ms);
  return t;
}

}  // namespace klab

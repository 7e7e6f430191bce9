#pragma once
// The one timing harness behind the CLI, the tests and the reports (docs/design.md's rules of honest measurement).
#include <functional>
#include <string>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/stats.hpp"

namespace klab {

struct BenchConfig {
  bool hot = false;                ///< opt-in: no L2 flush, no rotation (labelled "hot")
  double target_rel_noise = 0.01;  ///< stop once SampleStats::rel_noise is below this...
  int min_samples = 20;            ///< ...and at least this many samples were taken...
  double min_time_s = 0.05;        ///< ...and this much kernel time was measured
  int max_samples = 5000;          ///< hard stops
  double max_time_s = 2.0;         ///< wall-clock cap per benchmark
  double warmup_s = 0.02;          ///< warm-up: at least this long and 3 launches
  /// bench_gpu_interleaved: every timed sample appended to this file, one a line: the round, the
  /// place in the round, the variant's index, the input set, ms and SM MHz (empty: none).
  std::string samples_path;
};

struct Timing {
  std::vector<double> samples_ms;  ///< kept samples, ms per launch
  SampleStats stats;
  std::string mode;  ///< "cold" (L2 flushed before each sample), "hot", or "cpu"
  /// How a sample was timed, e.g. "events around 1 launch, stream held by a blocking kernel".
  std::string method;
  int launches_per_sample = 1;
  int rotation_sets = 1;  ///< input sets rotated among (working set smaller than L2)
  int sm_clock_min_mhz = 0, sm_clock_max_mhz = 0;  ///< read after each kept sample (NVML)
  /// Kept samples whose SM clock read below the device's maximum by more than
  /// kClockDropTolerance: the run was throttled (power or heat) while they ran.
  int throttled_samples = 0;
  int discarded_samples = 0;  ///< dropped: the SM clock fell below the benchmark's best
  bool converged = false;     ///< noise target reached before a hard stop
};

/// A sample whose SM clock reads more than this fraction below the highest clock read during its
/// benchmark is discarded (and counted); against the device's maximum it marks throttling.
inline constexpr double kClockDropTolerance = 0.02;

/// Which samples to keep: those whose clock (0: unknown) is within kClockDropTolerance of the
/// highest clock in `clock_mhz`. When fewer than 3 would be left, every sample is kept (the
/// clock never settled: the record is then flagged throttled instead).
std::vector<bool> clock_keep_mask(const std::vector<int>& clock_mhz);

/// Times `launch(set)` (which enqueues on `stream`) with CUDA events. Cold mode flushes L2 before
/// every sample (a read of twice the device's L2: see l2_flush.cu for why not a memset) and
/// rotates among `sets` input sets.
Timing bench_gpu(const std::function<void(int set)>& launch, int sets, Stream stream,
                 const BenchConfig& cfg);

/// One GPU variant of an interleaved benchmark: its launch of input set `set` on a stream, and
/// how many input sets it rotates among.
struct InterleavedLaunch {
  std::function<void(int set, Stream stream)> launch;
  int sets = 1;
};

/// Times several variants launch by launch: each round takes one cold sample of every variant
/// (bench_gpu's: L2 flushed, stream held by a blocking kernel, events around one launch), the
/// order drawn at random each round (seeded), so that neighbouring samples of two variants are
/// milliseconds apart and see the same clock and power state. Stops when every variant would
/// stop alone (bench_should_stop on its kept samples) or at n x cfg.max_time_s. Each Timing is
/// what bench_gpu gives (clock filter, throttled counts); `round_ms[j][i]` is variant j's sample
/// of round i, NaN where the clock filter dropped it. Cold mode only (throws UsageError for hot).
std::vector<Timing> bench_gpu_interleaved(const std::vector<InterleavedLaunch>& launches,
                                          Stream stream, const BenchConfig& cfg,
                                          std::vector<std::vector<double>>& round_ms);

/// The paired speed-up of a variant over its baseline in an interleaved benchmark: over the
/// rounds where both samples were kept, the ratio baseline ms / variant ms of the same round,
/// summarised (median, 10th and 90th percentiles; >1: faster than the baseline), and the
/// median's 95% confidence interval: distribution-free, the sorted ratios at 0-based ranks
/// (n - 1) / 2 -+ 1.96 sqrt(n) / 2, rounded outwards (the normal approximation to the binomial
/// count of ratios below the true median), from kMinPairsForCi pairs on (0 below).
struct PairedRatio {
  int pairs = 0;
  double median = 0, p10 = 0, p90 = 0;
  double ci_lo = 0, ci_hi = 0;
};
inline constexpr int kMinPairsForCi = 20;
/// `baseline_round_ms` and `round_ms` aligned by round (bench_gpu_interleaved's), NaN for a
/// dropped sample; rounds present in only one are left out. pairs = 0 when none is left.
PairedRatio paired_ratio(const std::vector<double>& baseline_round_ms,
                         const std::vector<double>& round_ms);

/// Times a synchronous host function with a steady clock (CPU variants).
Timing bench_cpu(const std::function<void()>& run, const BenchConfig& cfg);

/// Whether the sampling loop should stop (shared by both benches, unit-tested).
bool bench_should_stop(const std::vector<double>& samples_ms, double measured_s, double wall_s,
                       const BenchConfig& cfg, bool* converged);

}  // namespace klab

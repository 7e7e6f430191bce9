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
};

struct Timing {
  std::vector<double> samples_ms;
  SampleStats stats;
  std::string mode;       ///< "cold" (L2 flushed before each sample), "hot", or "cpu"
  int rotation_sets = 1;  ///< input sets rotated among (working set smaller than L2)
  int sm_clock_min_mhz = 0, sm_clock_max_mhz = 0;  ///< measured during the samples (NVML)
  int throttled_samples = 0;
  bool converged = false;  ///< noise target reached before a hard stop
};

/// Times `launch(set)` (which enqueues on `stream`) with CUDA events. Cold mode flushes L2 before
/// every sample (a read of twice the device's L2: see l2_flush.cu for why not a memset) and
/// rotates among `sets` input sets.
Timing bench_gpu(const std::function<void(int set)>& launch, int sets, Stream stream,
                 const BenchConfig& cfg);

/// Times a synchronous host function with a steady clock (CPU variants).
Timing bench_cpu(const std::function<void()>& run, const BenchConfig& cfg);

/// Whether the sampling loop should stop (shared by both benches, unit-tested).
bool bench_should_stop(const std::vector<double>& samples_ms, double measured_s, double wall_s,
                       const BenchConfig& cfg, bool* converged);

}  // namespace klab

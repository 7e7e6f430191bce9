#pragma once
// Measured hardware ceilings (bandwidth, later FLOP rates), cached per device.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "klab/harness/bench.hpp"
#include "klab/harness/stats.hpp"

namespace klab {

struct Ceiling {
  std::string name;      ///< "copy", "read", "write", "fp32", "bf16_tc", ...
  std::string unit;      ///< "GB/s" or "TFLOP/s"
  double value = 0;      ///< measured
  double datasheet = 0;  ///< vendor figure for this device, 0 when unknown
  std::string how;       ///< what was timed
};

struct Ceilings {
  std::string device;  ///< device name + PCI bus id it was measured on
  std::string timestamp;
  std::vector<Ceiling> items;
  const Ceiling* find(std::string_view name) const;
};

/// A probe measures one ceiling; more register themselves in ceiling_probes(): the families'
/// vendor baselines at their headline shapes among them (kernels/register_all.cpp), so that a
/// ceiling is the best that any kernel at hand demonstrably sustains.
using CeilingProbe = std::function<Ceiling(const BenchConfig&)>;
std::vector<CeilingProbe>& ceiling_probes();

/// Runs every probe on the GPU; where several probes measure the same ceiling, the highest
/// counts. Throws Error when there is no GPU.
Ceilings measure_ceilings(const BenchConfig& cfg);
/// Adds x to c, or raises c's ceiling of that name to x when x measured more.
void offer(Ceilings& c, const Ceiling& x);
/// "GB/s" for the bandwidth ceilings (copy, read, write, readN_write1), else "TFLOP/s".
std::string ceiling_unit(std::string_view name);

/// The time a ceiling probe is rated by: the 10th percentile of its samples (its fastest tenth),
/// not the median that results report. A ceiling bounds what a kernel sustains; rated by medians,
/// a later run's median of the same kernel exceeded it by 1-2% on power and clock drift alone
/// (cuBLASLt at 101.4% of bf16_tc). With the fastest decile, a result above 100% means a kernel
/// outran the best probe's fast samples: a real finding for the report to explain.
inline double ceiling_time_ms(const SampleStats& s) { return s.p10; }
/// How a probe's rating is described in its ceiling's `how`: "p10 of N samples".
inline std::string ceiling_rating(const SampleStats& s) {
  return "p10 of " + std::to_string(s.n) + " samples";
}
/// Cache file: $KLAB_CACHE_DIR or ~/.cache/klab, one file per device name and bus id.
std::string ceilings_cache_path();
std::optional<Ceilings> load_cached_ceilings();
void save_ceilings(const Ceilings& c);
/// Cached ceilings, or measured now (and cached) when none exist for this device.
const Ceilings& ceilings_for_this_device();

/// The read bandwidth a transfer of `bytes` sustains (bandwidth_probes.cu): the read probe's
/// kernel over that many bytes, cold L2, its best launch shape. The read ceiling is measured over
/// 1 GiB, where a launch's ramp and tail are amortised; a small transfer pays them, so this is
/// the ceiling a kernel that reads that many bytes can be held to. Rated as the ceilings are (the
/// fastest decile, p10_gbps), with the best median beside; `bytes` a positive multiple of 16.
struct SizedRead {
  int64_t bytes = 0;
  double p10_gbps = 0, median_gbps = 0;
  std::string how;
};
SizedRead measure_read_at(const BenchConfig& cfg, int64_t bytes);

/// Datasheet memory bandwidth in GB/s for known device names (0 when unknown).
double datasheet_bandwidth_gbps(const std::string& device_name);

}  // namespace klab

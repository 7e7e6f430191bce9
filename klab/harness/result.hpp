#pragma once
// One result record per (variant, problem, mode), as JSON.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "klab/harness/bench.hpp"
#include "klab/harness/check.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/device_memory.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/host_phases.hpp"

namespace klab {

struct Result {
  std::string variant, family;
  Problem problem;
  bool baseline_variant = false;
  std::string device_kind;    ///< "gpu" or "cpu"
  std::string status = "ok";  ///< "ok", "skipped", "error"
  std::string reason;         ///< why skipped / the error
  bool checked = false;
  CheckResult check;  ///< against fp64 (sampled at large sizes); passed folds in vendor_check
  /// Where the check was sampled: the vendor baseline's whole output, a second comparison.
  bool vendor_checked = false;
  CheckResult vendor_check;
  bool timed = false;
  Timing timing;
  Counts counts;
  double tflops = 0, gbps = 0;
  struct {
    std::string name, unit;
    double value = 0, datasheet = 0, pct = 0;  ///< pct of the measured value
  } ceiling;
  struct {
    std::string id;
    double speedup = 0;  ///< baseline median / this median (>1: faster than the baseline)
  } baseline;
  /// An interleaved benchmark's (klab bench --interleave): the speed-up over `paired_with` (the
  /// baseline timed in the same rounds) from the rounds' paired samples; pairs = 0 otherwise.
  PairedRatio paired;
  std::string paired_with;
  /// A tunable rung's choice for the problem (its Tunable's `current`): the configuration's
  /// name, where it came from ("cache", "committed" or "built-in", TunedChoice::source), the
  /// table file (empty for built-in) and whether the committed table was there to read where the
  /// run looked for it. Empty for other variants and for records written before it was kept.
  struct {
    std::string config, source, path;
    bool committed_table = false;
  } tuned;
  int block_threads = 0;  ///< sweep knob (0: the rung's default)
  /// The inputs' seed (RunOptions::seed, or the one drawn for a fresh run): `--seed` with it draws
  /// the same inputs again; 0 where none were drawn (a refused variant).
  uint64_t seed = 0;
  /// GPU records: the tensors, the workspace and the measured peak (klab/harness/device_memory.hpp);
  /// empty for CPU records, records without a device, and records written before it was kept.
  std::optional<DeviceMemory> device_memory;
  /// Host wall seconds per phase of the run (inputs, upload, reference, ..., "total"); empty in
  /// records written before it was kept.
  HostSeconds host_seconds;
  std::string timestamp;
  /// The device and build a record was measured with ({"device", "build"}), kept when a record
  /// is read back so that rewriting it (klab report --plot) never restamps it with this machine.
  /// Empty for a fresh record: to_json stamps machine_json().
  nlohmann::json machine;
};

/// The geometric mean of positive ratios (speed-ups).
double geometric_mean(const std::vector<double>& v);
/// x printed by one printf format of one double ("%.2fx").
std::string printed(double x, const char* format);
/// A rung of a family is "<family>.vNN_<name>": baselines, other libraries' records and a tune's
/// configurations ("<rung>[cfgN]", `klab tune`) are not.
bool is_rung_id(const std::string& id);
/// Why a tuned rung's record did not run the dispatch a user gets ("" where it did, or where the
/// record names no choice: other variants, records written before it was kept): the committed
/// table was not found, or the choice was a local tune cache's.
std::string tuned_dispatch_flag(const Result& r);
/// The build a record was measured with (its machine's git sha), "" where the record does not say.
std::string build_sha(const Result& r);

nlohmann::json to_json(const Result& r);
Result result_from_json(const nlohmann::json& j);
/// Device and build metadata stamped on every record.
nlohmann::json machine_json();
std::string now_iso8601();

/// Where records of two or more problems carry a speed-up over their baseline: a markdown table of
/// its geometric mean (and min, max) per variant with two or more such records, and of the
/// fastest variant of each problem (the "x baseline" column summarised, so that a worklog quotes
/// a generated number). Empty otherwise.
std::string speedup_summary(const std::vector<Result>& results);
/// The speed-ups of the runs' fast state: for every record whose baseline's record of the same
/// problem and mode is among the results, the x baseline of the medians (the table's) beside
/// baseline p10 / record p10, and the spread p90 / p10 of both, then the p10 ratios' geometric
/// mean per variant. Where a GPU steps between power states in stretches of seconds (attention
/// on an H200: 8-15% apart), the share of samples each record drew in the slow state
/// moves its median; the 10th percentiles compare both in the fast state. Empty without any
/// such pair. `klab report --fast-state` appends it.
std::string fast_state_summary(const std::vector<Result>& results);
/// The paired speed-ups of an interleaved benchmark (records with Result::paired): per record the
/// x baseline of the medians beside the median of the rounds' paired ratios and their p10 - p90,
/// then each variant's geometric mean of the paired medians. Empty without any. `klab report`
/// and `klab bench --interleave` append it.
std::string paired_summary(const std::vector<Result>& results);
/// Whether t was timed interleaved with exactly one other variant in an order rotated by one each
/// round (klab before e98e963): the timing path's slow phase (one sample in four) then fell on
/// one of the two for the whole process, and their ratio can be off by about kRotatedPhaseUs of
/// the launch either way (docs/design.md). paired_summary says so under its table, klab goals on
/// the row.
bool rotated_pair_order(const Timing& t);
/// The most such a ratio can be off, in microseconds of its launch: one kernel paired with itself
/// read 0.983-1.016x at 26 us (2026-12-07_6c9f909_placement, H100), about half the phase.
inline constexpr double kRotatedPhaseUs = 0.45;
/// Against another library's variant (`klab report --against ID`: FlashInfer's decode beside
/// decode_attention's rungs): for every problem and mode where `against` was timed, the fastest
/// rung of the family ("<family>.vNN_<name>" that did not fail its check; baselines and other
/// libraries left out), both
/// medians, the speed-up of the medians and of the 10th percentiles, and their geometric means
/// per dtype. Empty where no problem has both.
std::string against_summary(const std::vector<Result>& results, const std::string& against);
/// A timing's SM clock range as "min-max" MHz ("-" where none was read).
std::string clock_range(const Timing& t);
/// Whether two timings' SM clock ranges were both read and do not overlap: two records timed
/// apart (another library's, by a script) whose ratio then holds the clocks' difference too.
bool clocks_apart(const Timing& a, const Timing& b);
/// Where the same shape was timed in two or more dtypes (an e4m3 KV cache beside a bf16 one): a
/// markdown table of each dtype's fastest rung (baselines left out) against the widest dtype's,
/// the speed-up its median time gives, and their geometric mean per dtype pair. Empty otherwise.
std::string dtype_summary(const std::vector<Result>& results);

}  // namespace klab

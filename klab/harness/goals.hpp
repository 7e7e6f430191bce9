#pragma once
// klab goals: the issues' "done when" criteria as data (docs/goals.json), judged against the
// committed result records. Each criterion names a family, a dtype, the problems it holds at, a
// metric and a bound; the evaluation picks the records the rules below allow and says, per
// problem, the value, the variant and the run folder it came from, and whether the bound holds.
// Nothing is typed: a goal is met only where a record shows it.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "klab/core/dtype.hpp"
#include "klab/harness/result.hpp"

namespace klab {

enum class GoalMetric {
  x_baseline,   ///< speed-up over `against` (a baseline): the paired median, else the medians'
  x_variant,    ///< against.median / rung.median (another library, timed by a script)
  x_dtype,      ///< the fastest rung at `against`'s dtype over the rung, median times
  pct_ceiling,  ///< % of the measured ceiling named `ceiling`
  tflops,       ///< TFLOP/s
  median_us,    ///< the median time, microseconds (bounded from above)
};

struct Goal {
  std::string id;    ///< "13.1"
  int issue = 0;     ///< the issue the criterion belongs to
  std::string text;  ///< the criterion in words
  std::string family;
  DType dtype = DType::bf16;
  GoalMetric metric = GoalMetric::x_baseline;
  std::string against;  ///< x_baseline, x_variant: a variant id; x_dtype: a dtype name
  std::string ceiling;  ///< pct_ceiling: the ceiling's name ("read", "copy")
  /// pct_ceiling: count only the bytes of one operand, dtype elements of the product of these
  /// dimensions ({"k", "n"}: a GEMM's weight); empty: the record's own byte count.
  std::vector<std::string> bytes_of;
  double bound = 0;
  bool at_most = false;            ///< the value must be <= bound (else >= bound)
  bool geomean = false;            ///< judged on the problems' geometric mean, not each
  std::vector<std::string> rungs;  ///< only these rungs (empty: every rung of the family)
  std::vector<Shape> problems;
  /// x_baseline, at_least ("tie_within_noise"): problems of `problems` where a tie within noise
  /// meets the bound: the best rung's paired median under it, but its 95% confidence interval
  /// (PairedRatio's, from the rung's and the baseline's samples of one interleaved benchmark)
  /// reaching the bound and starting no more than kTieMargin under it.
  std::vector<Shape> ties;
};

/// docs/goals.json's {"goals": [...]}; UsageError (one line naming the goal and the key) for an
/// unknown key or metric, a missing field, a malformed shape or dtype.
std::vector<Goal> parse_goals(const nlohmann::json& j);

/// Records a goals file sets aside (its "set_aside" list): those of result files whose path
/// below the results folder starts with `records` ("<run>/b": a form of a rung whose code was
/// reverted after the run), for the reason `why`.
struct SetAside {
  std::string records, why;
};
/// The goals file's "set_aside" list (empty when absent); UsageError for a malformed entry.
std::vector<SetAside> parse_set_aside(const nlohmann::json& j);

/// A record with the run folder it was read from (results/h200/<run>/...).
struct SourcedResult {
  Result r;
  std::string run;
};

/// A tie's interval may start at most this share under the bound: noise alone does not make a
/// tie of a wide interval.
inline constexpr double kTieMargin = 0.01;

struct GoalRow {
  std::string problem;  ///< the shape, or "geometric mean over N problems"
  bool measured = false;
  double value = 0;
  bool met = false;
  std::string variant;  ///< the rung the value is of
  std::string run;      ///< its run folder
  std::string how;      ///< "paired, N rounds", "medians", ...
  /// x_baseline's paired median: its 95% confidence interval where the samples give it (0, 0
  /// otherwise); for a median of several processes, their range.
  double ci_lo = 0, ci_hi = 0;
  bool processes = false;  ///< the value is the median of several processes' paired medians
  /// The relative error the value's benchmark order allows (result.hpp's kRotatedPhaseUs over the
  /// launch's median, where rotated_pair_order), 0 where none: a row met only inside it is not met.
  double bias = 0;
};

struct GoalResult {
  const Goal* goal = nullptr;
  std::vector<GoalRow> rows;  ///< one a problem (+ the geometric mean's)
  bool met = false;           ///< every problem's row met (or the geometric mean)
};

/// Judges every goal against `records`. Records count only if timed, cold (L2 flushed), at the
/// rung's own block size, not failing their check, and of a rung ("<family>.vNN_<name>"). Each
/// problem is judged on one run folder, the newest that holds a value for it (for x_variant and
/// x_dtype, both sides): within it each rung's newest record, and the best rung's value. So a
/// rung's lucky record in an old run does not outlive the runs after it, and no ratio mixes two
/// runs. pct_ceiling divides by the record's own ceiling where it is the one named (measured in
/// that run), else by the highest measurement of the named ceiling in `highest_ceilings` (as
/// klab roofline does).
std::vector<GoalResult> evaluate_goals(const std::vector<Goal>& goals,
                                       const std::vector<SourcedResult>& records,
                                       const std::map<std::string, double>& highest_ceilings);

/// The markdown: a summary table (goal, issue, met), then each goal's rows.
std::string goals_markdown(const std::vector<GoalResult>& results);

/// "1.023x", "91.4%", "652 TFLOP/s", "12.31 us": a goal metric's value as printed (`finer`: one
/// more digit).
std::string goal_value_text(GoalMetric m, double v, bool finer = false);

}  // namespace klab

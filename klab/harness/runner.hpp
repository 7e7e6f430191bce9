#pragma once
// Runs one variant on one problem: inputs, check against the reference, benchmark, result.
#include <cstdint>
#include <vector>

#include "klab/harness/registry.hpp"
#include "klab/harness/result.hpp"

namespace klab {

struct RunOptions {
  bool check = true;
  bool bench = true;
  /// One check per distribution, each with fresh inputs.
  std::vector<Dist> dists{Dist::normal};
  uint64_t seed = 0;  ///< 0: a fresh seed per run (recorded); else reproducible
  BenchConfig bench_cfg;
  int block_threads = 0;
};

/// Never throws for a variant's own failure: it is recorded in Result::status.
/// Throws UsageError only for requests that are wrong (a GPU variant without a GPU).
Result run_variant(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt);

/// Fills Result::baseline for every record of the same problem: the first successful baseline
/// variant on the same kind of device.
void attach_baselines(std::vector<Result>& results);

/// Fills throughput and ceiling fields from counts and timing.
void attach_throughput(const Family& f, Result& r);

/// One record from the rounds of one variant at one problem (`klab bench --rounds`: every
/// variant of a problem runs once per round, so slow drifts of clock and power between the
/// first variant and the last fall on all of them alike). The first round's record (its check,
/// its setup) with every round's kept samples pooled and the statistics, clocks, dropped and
/// throttled counts recomputed over them; the method names the rounds. A round that did not
/// time (skipped, error) is the record returned: a variant fails as a whole.
Result merge_rounds(const Family& f, std::vector<Result> rounds);

}  // namespace klab

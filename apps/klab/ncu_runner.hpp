#pragma once
// Nsight Compute on the kernels a variant launches: runs ncu (--clock-control none: the clocks
// as they are) on a `klab bench` or `klab check` of the variant, restricted by name to those
// kernels, and parses its CSV. Shared by `klab profile` and `klab doctor`.
#include <string>
#include <vector>

#include "apps/klab/targets.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/profiler/ncu_csv.hpp"

namespace klab::cli {

struct NcuRequest {
  std::string set = "all";  ///< metric set (metric_sets.hpp)
  /// The klab command ncu runs: "bench" profiles the benchmark's first launch (the check's launch
  /// is skipped); "check" profiles the check's launch (for rungs that fail their check).
  std::string command = "bench";
  std::string out;  ///< keep the CSV, the program's log and the command here ("": a temporary
                    ///< folder, removed)
};

struct NcuRun {
  NcuReport report;
  int exit_code = -1;  ///< ncu's
  std::string csv;     ///< the raw CSV's path, when kept
};

/// Runs ncu on the variant's kernels `ks` (from capture_kernels). Throws UsageError when ncu may
/// not read the counters (ERR_NVGPUCTRPERM) or --out cannot be created, Error when ncu profiled
/// no kernel.
NcuRun profile_variant(const Target& t, const std::vector<CapturedKernel>& ks,
                       const std::string& ncu, const NcuRequest& req);

}  // namespace klab::cli

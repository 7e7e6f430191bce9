#pragma once
// Nsight Compute results as records: `klab profile --json` appends one per profiled variant and
// problem, `klab profile-report` renders them as a markdown table (so that a worklog's profiler
// numbers are generated from committed files, like its timing tables).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/profiler/demangle.hpp"
#include "klab/harness/profiler/ncu_csv.hpp"
#include "klab/harness/profiler/sass.hpp"

namespace klab::cli {

/// {variant, family, problem, dtype, set, timestamp, flops, bytes, kernels: [ncu columns], device,
/// build}: every column ncu printed for each profiled launch, as text.
nlohmann::json profile_record(const std::string& variant, const std::string& family,
                              const Problem& p, const std::string& set, const Counts& counts,
                              const NcuReport& rep);

/// The same record shape for `klab sass --json` (set "sass"): one row per kernel with its static
/// instruction counts and the main loop's fall-through iteration (SassSummary::main_loop).
nlohmann::json sass_record(const std::string& variant, const std::string& family, const Problem& p,
                           const Counts& counts,
                           const std::vector<std::pair<std::string, SassSummary>>& kernels);

/// Appends to a JSON array file (created when absent; UsageError when it holds something else).
void append_profile_record(const std::string& path, const nlohmann::json& record);

/// Every record in the files (UsageError naming a file that is not a profile record array).
std::vector<nlohmann::json> load_profile_records(const std::vector<std::string>& paths);

/// One table per family: a row per profiled kernel launch with the figures the worklogs use
/// (time under the profiler, DRAM throughput and bytes against the minimum, L2 hit rate, issue
/// and pipe activity, achieved occupancy, shared-memory bank conflicts, the top warp stalls).
std::string profile_markdown(const std::vector<nlohmann::json>& records,
                             const std::vector<std::string>& files);

}  // namespace klab::cli

#pragma once
// The Nsight Compute metric sets of `klab profile --set sol|memory|stalls|all` (and `klab doctor`,
// which reads the memory set), and the names of the metrics their summaries read.
#include <string>
#include <string_view>
#include <vector>

namespace klab::cli {

/// Launch statistics, time and occupancy: in every set.
extern const std::vector<std::string> kAlways;
/// Speed of light: SM, memory, DRAM, L1, L2 throughput and pipe utilisation.
extern const std::vector<std::string> kSol;
/// Memory: DRAM bytes, hit rates, sectors per request, bank conflicts, local traffic, L2 sectors.
extern const std::vector<std::string> kMemory;
/// Warp-stall reasons: kStallPrefix + reason + kStallSuffix.
inline constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
inline constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";
/// Used when `ncu --query-metrics` cannot say which reasons this ncu knows.
extern const std::vector<std::string> kStallReasons;

/// The metrics of `set` that this ncu knows on this GPU (asks `ncu --query-metrics`).
std::vector<std::string> profile_metrics(const std::string& set, const std::string& ncu);

}  // namespace klab::cli

// The Nsight Compute metric sets, filtered by what this ncu knows.
#include "apps/klab/metric_sets.hpp"

#include <functional>
#include <set>

#include "apps/klab/tool_runner.hpp"
#include "klab/harness/profiler/ncu_csv.hpp"

namespace klab::cli {

const std::vector<std::string> kAlways = {"gpu__time_duration.sum",
                                          "launch__registers_per_thread",
                                          "launch__block_size",
                                          "launch__grid_size",
                                          "launch__occupancy_limit_registers",
                                          "launch__occupancy_limit_shared_mem",
                                          "launch__occupancy_limit_warps",
                                          "launch__occupancy_limit_blocks",
                                          "sm__maximum_warps_per_active_cycle_pct",
                                          "sm__warps_active.avg.pct_of_peak_sustained_active"};
const std::vector<std::string> kSol = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    // The XU pipe's issue rate against its peak: MUFU (exp2, rcp, ...), attention's exponentials.
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"};
const std::vector<std::string> kMemory = {
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    // L2 sectors by direction and outcome: where an L2 hit rate comes from (reads that hit, or
    // writes, which L2 takes without reading DRAM).
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write_lookup_hit.sum"};
const std::vector<std::string> kStallReasons = {"barrier",
                                                "branch_resolving",
                                                "dispatch_stall",
                                                "drain",
                                                "imc_miss",
                                                "lg_throttle",
                                                "long_scoreboard",
                                                "math_pipe_throttle",
                                                "membar",
                                                "mio_throttle",
                                                "misc",
                                                "no_instruction",
                                                "not_selected",
                                                "selected",
                                                "short_scoreboard",
                                                "sleeping",
                                                "tex_throttle",
                                                "wait"};

std::vector<std::string> profile_metrics(const std::string& set, const std::string& ncu) {
  std::vector<std::string> want = kAlways;
  const bool all = set == "all";
  if (all || set == "sol") want.insert(want.end(), kSol.begin(), kSol.end());
  if (all || set == "memory") want.insert(want.end(), kMemory.begin(), kMemory.end());
  const bool stalls = all || set == "stalls";
  if (stalls) want.push_back("smsp__average_warp_latency_per_inst_issued.ratio");

  // Keep what this ncu knows on this GPU: an unknown metric would fail the whole run. The list
  // is trusted only when it holds metrics every ncu has (else it was not the format we read);
  // launch statistics are not counters and may be missing from it.
  const Output q = run(quote(ncu) + " --query-metrics 2>&1");
  std::vector<std::string> known_list =
      q.code == 0 ? parse_ncu_metric_list(q.text) : std::vector<std::string>{};
  std::set<std::string, std::less<>> known(known_list.begin(), known_list.end());
  if (!known.contains("dram__bytes_read") || !known.contains("sm__throughput")) known.clear();
  std::vector<std::string> out;
  for (const auto& m : want)
    if (known.empty() || known.contains(metric_base_name(m)) || m.starts_with("launch__") ||
        m == "sm__maximum_warps_per_active_cycle_pct")
      out.push_back(m);
  if (stalls) {
    const std::string_view base_suffix =
        kStallSuffix.substr(0, kStallSuffix.rfind('.'));  // "_per_issue_active"
    bool any = false;
    for (const auto& k : known)
      if (k.starts_with(kStallPrefix) && k.ends_with(base_suffix)) {
        out.push_back(k + ".ratio");
        any = true;
      }
    if (!any)
      for (const auto& r : kStallReasons)
        out.push_back(std::string(kStallPrefix) + r + std::string(kStallSuffix));
  }
  return out;
}

}  // namespace klab::cli

// klab profile: Nsight Compute on `klab bench` restricted to a variant's kernels, summarised.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "apps/klab/inspect.hpp"
#include "apps/klab/metric_sets.hpp"
#include "apps/klab/ncu_runner.hpp"
#include "apps/klab/profile_records.hpp"
#include "apps/klab/tool_runner.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/profiler/all.hpp"

namespace klab::cli {

namespace {

void print_profile_row(const NcuRow& r, const Counts& counts) {
  auto num = [&](std::string_view m) { return r.number(m); };
  auto pct = [&](std::string_view m) {
    auto v = num(m);
    return v ? fmt::format("{:.1f}%", *v) : std::string("n/a");
  };
  std::cout << "\nkernel: " << demangle(r.text("Kernel Name")) << "\n";
  std::cout << fmt::format("  launch   grid {} block {}, {} regs/thread", r.text("Grid Size"),
                           r.text("Block Size"), r.text("launch__registers_per_thread"));
  if (auto t = num("gpu__time_duration.sum"))
    std::cout << fmt::format(", {:.2f} us (under the profiler)", *t / 1e3);
  std::cout << "\n";
  if (auto th = num("sm__maximum_warps_per_active_cycle_pct")) {
    std::cout << fmt::format("  occupancy  theoretical {:.1f}%, achieved {}", *th,
                             pct("sm__warps_active.avg.pct_of_peak_sustained_active"));
    auto blocks = [&](std::string_view m) {
      auto v = num(m);
      return v ? fmt::format("{:.0f}", *v) : std::string("-");
    };
    std::cout << fmt::format(
        "; blocks/SM allowed by registers {}, shared memory {}, warps {}, blocks {}\n",
        blocks("launch__occupancy_limit_registers"), blocks("launch__occupancy_limit_shared_mem"),
        blocks("launch__occupancy_limit_warps"), blocks("launch__occupancy_limit_blocks"));
  }
  if (num("sm__throughput.avg.pct_of_peak_sustained_elapsed")) {
    std::cout << fmt::format(
        "  speed of light  SM {}  memory {}  DRAM {}  L1 {}  L2 {}\n",
        pct("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("l1tex__throughput.avg.pct_of_peak_sustained_active"),
        pct("lts__throughput.avg.pct_of_peak_sustained_elapsed"));
    std::cout << fmt::format("  pipes    issue active {}  FMA {}  tensor {}  XU (MUFU) {}\n",
                             pct("smsp__issue_active.avg.pct_of_peak_sustained_active"),
                             pct("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
                             pct("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
                             pct("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"));
  }
  if (auto rd = num("dram__bytes_read.sum")) {
    const double wr = num("dram__bytes_write.sum").value_or(0);
    std::cout << fmt::format("  memory   DRAM read {} write {}", bytes_text(*rd), bytes_text(wr));
    if (counts.bytes > 0)
      std::cout << fmt::format(" = {:.2f}x the minimal {}", (*rd + wr) / counts.bytes,
                               bytes_text(counts.bytes));
    std::cout << fmt::format("; hit rate L2 {} L1 {}\n", pct("lts__t_sector_hit_rate.pct"),
                             pct("l1tex__t_sector_hit_rate.pct"));
    auto ratio = [&](std::string_view a, std::string_view b) {
      auto x = num(a), y = num(b);
      return x && y && *y > 0 ? fmt::format("{:.2f}", *x / *y) : std::string("-");
    };
    if (auto l2r = num("lts__t_sectors_op_read.sum")) {
      auto share = [&](std::string_view hit, std::optional<double> all) {
        auto h = num(hit);
        return h && all && *all > 0 ? fmt::format("{:.1f}%", 100 * *h / *all) : std::string("-");
      };
      const auto l2w = num("lts__t_sectors_op_write.sum");
      std::cout << fmt::format(
          "  L2 sectors  read {} (hit {})  write {} (hit {})\n", bytes_text(*l2r * 32),
          share("lts__t_sectors_op_read_lookup_hit.sum", l2r), bytes_text(l2w.value_or(0) * 32),
          share("lts__t_sectors_op_write_lookup_hit.sum", l2w));
    }
    std::cout << fmt::format(
        "  sectors/request  global loads {}  stores {}  (4 = a warp's 4-byte accesses coalesced)\n",
        ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
              "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
    auto conflicts = [&](std::string_view c, std::string_view w) {
      auto x = num(c), y = num(w);
      if (!x) return std::string("n/a");
      return fmt::format("{:.0f}", *x) +
             (y && *y > 0 ? fmt::format(" ({:.1f}% of wavefronts)", 100 * *x / *y) : "");
    };
    std::cout << fmt::format("  shared bank conflicts  loads {}  stores {}\n",
                             conflicts("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                             conflicts("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
    const double local = num("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum").value_or(0) +
                         num("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum").value_or(0);
    if (local > 0)
      std::cout << "  local memory traffic " << bytes_text(local)
                << " (register spills or stack)\n";
  }
  auto stalls = top_metrics(r, kStallPrefix, kStallSuffix, 64);
  std::erase_if(stalls,
                [](const auto& s) { return s.first == "selected"; });  // issuing, not stalled
  if (!stalls.empty()) {
    const double total = num("smsp__average_warp_latency_per_inst_issued.ratio").value_or(0);
    std::cout << "  warp stalls (cycles per issued instruction"
              << (total > 0 ? fmt::format(", {:.1f} in all", total) : "") << "):";
    for (size_t i = 0; i < stalls.size() && i < 5; ++i)
      std::cout << fmt::format(
          "  {} {:.2f}{}", stalls[i].first, stalls[i].second,
          total > 0 ? fmt::format(" ({:.0f}%)", 100 * stalls[i].second / total) : "");
    std::cout << "\n";
  }
}

}  // namespace

int cmd_profile(const InspectOptions& opt) {
  // Every target resolved before any tool or GPU work: a bad id or shape is one line, nothing run.
  std::vector<Target> targets;
  for (const std::string& id : opt.variants) {
    InspectOptions one = opt;
    one.variant = id;
    targets.push_back(resolve(one));
  }
  const std::string ncu = need_tool("ncu", "profile", "Nsight Compute");
  require_gpu("profile");
  // The `klab bench` that ncu runs reads this device's ceilings from the cache. Measured under
  // ncu instead, every probe kernel and cuBLASLt GEMM runs instrumented and one profile takes
  // minutes (each profile of one early run timed out so): measure them here, outside the profiler, once.
  if (!load_cached_ceilings())
    std::cerr << "measuring this device's ceilings once, outside the profiler (cached at "
              << ceilings_cache_path() << ")\n";
  ceilings_for_this_device();
  int exit_code = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    if (i > 0) std::cout << "\n";
    const std::vector<CapturedKernel> ks = capture_kernels(*t.family, *t.variant, t.problem);
    if (ks.empty()) throw Error(t.variant->info.id + " launched no kernel to profile");
    const NcuRun run = profile_variant(t, ks, ncu, {opt.set, "bench", opt.out});

    print_header(t);
    std::cout << "ncu --set " << opt.set << ", " << run.report.rows.size()
              << " launch(es) profiled (cache flushed, clocks as they are)\n";
    const Counts counts = t.family->counts(t.problem);
    for (const auto& row : run.report.rows)
      print_profile_row(row, run.report.rows.size() == 1 ? counts : Counts{});
    if (!run.csv.empty()) std::cout << "\nraw CSV: " << run.csv << "\n";
    if (!opt.json.empty()) {
      append_profile_record(opt.json, profile_record(t.variant->info.id, t.family->name, t.problem,
                                                     opt.set, counts, run.report));
      std::cout << "appended to " << opt.json << "\n";
    }
    if (run.exit_code != 0) exit_code = 1;
  }
  return exit_code;
}

}  // namespace klab::cli

// klab doctor VARIANT: what is wrong with a rung, and where. Three examinations:
//   check      the harness's check, in this process (as `klab check` runs it)
//   sanitizers compute-sanitizer memcheck, racecheck, initcheck and synccheck, each over a
//              `klab check` of the variant in a child process
//   ncu        Nsight Compute's memory metrics of the check's launch (uncoalesced accesses, bank
//              conflicts)
// then one line per finding (klab/harness/diagnosis.hpp decides). Exit 0: nothing found; 1: a
// problem found; 2: bad usage or no GPU. A missing tool is one line and skipped.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include "apps/klab/inspect.hpp"
#include "apps/klab/ncu_runner.hpp"
#include "apps/klab/tool_runner.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/diagnosis.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/profiler/all.hpp"
#include "klab/harness/runner.hpp"

namespace klab::cli {

namespace {

using diagnosis::Finding;

constexpr const char* kSanitizerTools[] = {"memcheck", "racecheck", "initcheck", "synccheck"};

// Source paths in compute-sanitizer's reports are the compile-time ones: shown relative to it.
std::string source_root() {
#ifdef KLAB_SOURCE_DIR
  return KLAB_SOURCE_DIR;
#else
  return "";
#endif
}

void step(const std::string& name, const std::string& text) {
  std::cout << fmt::format("{:<10} {}\n", name, text);
}

// The target's `klab check` arguments (the same problem in the child as here).
std::string check_args(const Target& t) {
  return " check " + quote(t.variant->info.id) + " --shape " + quote(t.problem.shape.str()) +
         " --dtype " + std::string(dtype_name(t.problem.dtype)) + " --quiet --seed 1";
}

void run_check(const Target& t, std::vector<Finding>& out, bool& launch_failed) {
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal};
  const Result r = run_variant(*t.family, *t.variant, t.problem, opt);
  launch_failed = r.status == "error";
  if (r.status == "skipped")
    step("check", "skipped: " + r.reason);
  else if (r.status == "error")
    step("check", "error: " + r.reason);
  else
    step("check", r.check.passed ? "pass" : "FAILED: " + r.check.summary());
  for (auto& f : diagnosis::check_findings(r)) out.push_back(std::move(f));
}

void run_sanitizers(const Target& t, std::vector<Finding>& out) {
  const std::string cs = find_tool("compute-sanitizer");
  for (const char* tool : kSanitizerTools) {
    if (cs.empty()) {
      step(tool,
           "skipped: compute-sanitizer is not on PATH, in $CUDA_HOME/bin or in "
           "/usr/local/cuda/bin");
      continue;
    }
    std::cerr << "running compute-sanitizer --tool " << tool << " on a check of "
              << t.variant->info.id << "...\n";
    const Output o = run(quote(cs) + " --tool " + tool + " --error-exitcode 9 --print-limit 10 " +
                         quote(self_exe()) + check_args(t) + " 2>&1");
    const diagnosis::SanitizerReport rep = diagnosis::parse_sanitizer_output(tool, o.text);
    if (!rep.ran) {
      std::string first = o.text.substr(0, o.text.find('\n'));
      step(tool, fmt::format("skipped: compute-sanitizer did not run (exit {}){}", o.code,
                             first.empty() ? "" : ": " + first));
      continue;
    }
    const auto fs = diagnosis::sanitizer_findings(rep, source_root());
    const int64_t errors = rep.error_summary.value_or(static_cast<int64_t>(rep.records.size()));
    step(tool, errors == 0 && fs.empty()
                   ? "clean"
                   : fmt::format("{} error{}", errors, errors == 1 ? "" : "s"));
    for (const auto& f : fs) out.push_back(f);
  }
}

diagnosis::MemoryMetrics memory_metrics(const NcuRow& r) {
  diagnosis::MemoryMetrics m;
  m.kernel = demangle(r.text("Kernel Name"));
  m.global_ld_sectors = r.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
  m.global_ld_requests = r.number("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
  m.global_st_sectors = r.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  m.global_st_requests = r.number("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
  m.shared_ld_conflicts = r.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  m.shared_ld_wavefronts = r.number("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum");
  m.shared_st_conflicts = r.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  m.shared_st_wavefronts = r.number("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum");
  return m;
}

std::string ratio_text(const std::optional<double>& a, const std::optional<double>& b) {
  return a && b && *b > 0 ? fmt::format("{:.1f}", *a / *b) : std::string("-");
}

void run_ncu(const Target& t, bool launch_failed, std::vector<Finding>& out) {
  if (launch_failed) {
    step("ncu", "skipped: the variant's launch fails (see check)");
    return;
  }
  const std::string ncu = find_tool("ncu");
  if (ncu.empty()) {
    step("ncu",
         "skipped: Nsight Compute (ncu) is not on PATH, in $CUDA_HOME/bin or in "
         "/usr/local/cuda/bin");
    return;
  }
  try {
    const std::vector<CapturedKernel> ks = capture_kernels(*t.family, *t.variant, t.problem);
    if (ks.empty()) {
      step("ncu", "skipped: the variant launched no kernel");
      return;
    }
    const NcuRun run = profile_variant(t, ks, ncu, {"memory", "check", ""});
    for (const auto& row : run.report.rows) {
      const diagnosis::MemoryMetrics m = memory_metrics(row);
      step("ncu", fmt::format("{}: sectors per global load request {}, per store request {}; "
                              "shared bank conflicts per wavefront: loads {}, stores {}",
                              diagnosis::short_kernel_name(m.kernel),
                              ratio_text(m.global_ld_sectors, m.global_ld_requests),
                              ratio_text(m.global_st_sectors, m.global_st_requests),
                              ratio_text(m.shared_ld_conflicts, m.shared_ld_wavefronts),
                              ratio_text(m.shared_st_conflicts, m.shared_st_wavefronts)));
      for (auto& f : diagnosis::ncu_findings(m)) out.push_back(std::move(f));
    }
  } catch (const std::exception& e) {  // no counters permission, nothing profiled, capture failed
    step("ncu", std::string("skipped: ") + e.what());
  }
}

}  // namespace

int cmd_doctor(const InspectOptions& opt) {
  const Target t = resolve(opt);
  const DeviceInfo& d = device_info();
  if (!d.present) {
    for (const char* s : {"check", "memcheck", "racecheck", "initcheck", "synccheck", "ncu"})
      step(s, "skipped: no GPU");
    throw UsageError("doctor needs a GPU, and there is none: " + d.absent_reason);
  }
  print_header(t);
  std::vector<Finding> findings;
  bool launch_failed = false;
  run_check(t, findings, launch_failed);
  run_sanitizers(t, findings);
  // Last: capture_kernels runs the variant in this process again.
  run_ncu(t, launch_failed, findings);
  if (findings.empty()) {
    std::cout << "diagnosis: nothing found\n";
    return 0;
  }
  std::cout << "diagnosis: " << findings.size() << " problem" << (findings.size() == 1 ? "" : "s")
            << "\n";
  for (const auto& f : findings) std::cout << f.line() << "\n";
  return 1;
}

}  // namespace klab::cli

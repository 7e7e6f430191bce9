// Running Nsight Compute on a variant's kernels and reading back its CSV.
#include "apps/klab/ncu_runner.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "apps/klab/metric_sets.hpp"
#include "apps/klab/tool_runner.hpp"
#include "klab/core/errors.hpp"

namespace klab::cli {

namespace fs = std::filesystem;

namespace {

std::string regex_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

NcuRun profile_variant(const Target& t, const std::vector<CapturedKernel>& ks,
                       const std::string& ncu, const NcuRequest& req) {
  std::string names;
  std::set<std::string> seen;
  int per_launch = 0;
  for (const auto& k : ks) {
    per_launch += k.launches;
    if (seen.insert(k.name).second) names += (names.empty() ? "" : "|") + regex_escape(k.name);
  }

  // Output folder: --out, or a temporary one removed afterwards.
  fs::path dir;
  bool temp = false;
  if (!req.out.empty()) {
    dir = req.out;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw UsageError("cannot create " + req.out + ": " + ec.message());
  } else {
    std::string tmpl = (fs::temp_directory_path() / "klab-profile-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a temporary folder");
    dir = tmpl;
    temp = true;
  }
  const std::string stem = t.variant->info.id + "." + req.set;
  const fs::path csv = dir / (stem + ".ncu.csv"), app_log = dir / (stem + ".app.log");

  std::string metrics;
  for (const auto& m : profile_metrics(req.set, ncu)) metrics += (metrics.empty() ? "" : ",") + m;
  // bench: skip the check's launch (the first `per_launch` matching kernels); profile the next
  // one. check: profile the check's launch.
  const bool bench = req.command == "bench";
  const std::string cmd =
      quote(ncu) +
      " --clock-control none --csv --page raw --print-units base --kernel-name-base mangled" +
      " --kernel-name " + quote("regex:^(" + names + ")$") + " --launch-skip " +
      std::to_string(bench ? per_launch : 0) + " --launch-count " + std::to_string(per_launch) +
      " --metrics " + quote(metrics) + " --log-file " + quote(csv.string()) + " " +
      quote(self_exe()) + (bench ? " bench " : " check ") + quote(t.variant->info.id) +
      " --shape " + quote(t.problem.shape.str()) + " --dtype " +
      std::string(dtype_name(t.problem.dtype)) + (bench ? " --max-time 0.05" : "") +
      " --quiet --seed 1 > " + quote(app_log.string()) + " 2>&1";
  if (!temp) std::ofstream(dir / (stem + ".cmd")) << cmd << "\n";
  std::cerr << "profiling " << ks.size() << " kernel(s) of " << t.variant->info.id
            << " with ncu (--set " << req.set << ", under klab " << req.command << ")...\n";
  const Output o = run(cmd);

  auto slurp = [](const fs::path& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  // The report normally lands in the log file; read the program's output too, in case it did not.
  const std::string log = slurp(csv), app = slurp(app_log);
  NcuReport rep = parse_ncu_csv(log);
  if (rep.rows.empty()) rep = parse_ncu_csv(log + "\n" + app);
  std::string error;
  for (const auto& m : rep.messages)
    if (m.starts_with("==ERROR==")) error = error.empty() ? m : error;
  if (temp) fs::remove_all(dir);
  if (error.find("ERR_NVGPUCTRPERM") != std::string::npos)
    throw UsageError(
        "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root or "
        "allow "
        "non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0)");
  if (rep.rows.empty())
    throw Error("ncu profiled no kernel (exit " + std::to_string(o.code) + ")" +
                (error.empty() ? "" : ": " + error) +
                (temp ? "" : "; see " + csv.string() + " and " + app_log.string()));

  NcuRun out;
  out.report = std::move(rep);
  out.exit_code = o.code;
  if (!temp) out.csv = csv.string();
  return out;
}

}  // namespace klab::cli

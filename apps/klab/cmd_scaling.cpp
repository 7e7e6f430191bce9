// klab scaling: how a CPU rung scales with threads. The rung runs at 1, 2, 4, ... threads (powers
// of two below the maximum, then the maximum), through the same run_variant as every other
// command; the table shows throughput, the speed-up over one thread and the parallel efficiency
// (speed-up / threads). The thread count is klab::cpu::thread_count() for the cpuNN rungs and
// OpenMP's default team size for rungs that leave it to the runtime (the v00_cpu rungs).
#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "kernels/cpu/ladder.hpp"
#include "kernels/cpu/threads.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"

namespace klab::cli {

namespace {

struct ScalingOptions {
  std::string variant, shape, dtype, json_path, plot;
  int max_threads = 0;  // 0: thread_count() (KLAB_CPU_THREADS or the hardware's count)
  bool no_check = false;
  SamplingOptions sampling;
};

std::vector<int> thread_counts(int max) {
  std::vector<int> out;
  for (int t = 1; t < max; t *= 2) out.push_back(t);
  out.push_back(max);
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (line.rfind("model name", 0) != 0 || colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

// Memory-bound families report GB/s, the others GFLOP/s (the unit their ceiling is in).
bool memory_bound(const Family& f) {
  return f.ceiling == "copy" || f.ceiling == "read" || f.ceiling == "write";
}

int run_scaling(const ScalingOptions& o) {
  auto [f, v] = registry().variant(o.variant);
  if (v->info.device != Device::cpu)
    throw UsageError(v->info.id +
                     " runs on the GPU; scaling measures CPU rungs (device cpu in `klab list`)");
  if (o.max_threads < 0) throw UsageError("--max-threads must be positive");
  if (!o.plot.empty() && (o.json_path.empty() || o.json_path == "-"))
    throw UsageError("--plot needs --json FILE (the plot is drawn from it)");
  const Problem p =
      o.shape.empty()
          ? f->headline.front()
          : make_problem(
                *f, o.shape,
                o.dtype.empty() ? std::string(dtype_name(v->info.dtypes.front())) : o.dtype);
  const int max_threads = o.max_threads > 0 ? o.max_threads : cpu::thread_count();
  const std::vector<int> counts = thread_counts(max_threads);
  // Every thread count must be runnable, decided before any work (a rung's limits may depend on
  // its thread count).
  for (int t : counts) {
    cpu::ScopedThreadCount scope(t);
    if (const Status st = can_run(*v, p); !st.ok())
      throw UsageError(v->info.id + " cannot run " + p.str() + " at " + std::to_string(t) +
                       " threads: " + st.reason);
  }

  RunOptions opt;
  o.sampling.apply(opt);
  // Checked at every thread count (partitioning bugs depend on it); above the family's
  // CPU-reference limit against fp64 samples of the outputs.
  opt.check = !o.no_check;
  const unsigned hw = std::thread::hardware_concurrency();
  std::cout << "## scaling " << v->info.id << " " << p.str() << "\n"
            << cpu_model() << ", " << hw << " hardware threads"
            << (!opt.check      ? "; outputs not checked"
                : f->sampled(p) ? "; outputs checked against fp64 samples"
                                : "")
            << "\n";

  if (cpu::single_threaded(v->info.id))
    std::cout
        << "(" << v->info.id
        << " runs on one thread by design: a flat line, the control for the threaded rungs)\n";

  Progress progress(static_cast<int>(counts.size()), o.sampling.quiet);
  std::vector<Result> results;
  bool failed = false;
  const int omp_default = omp_get_max_threads();
  for (int t : counts) {
    progress.step(v->info.id + " threads=" + std::to_string(t));
    cpu::ScopedThreadCount scope(t);
    omp_set_num_threads(
        t);  // rungs that take OpenMP's default team size (the v00_cpu rungs) follow too
    results.push_back(run_variant(*f, *v, p, opt));
    omp_set_num_threads(omp_default);
    const Result& r = results.back();
    failed |= r.status != "ok" || (r.checked && !r.check.passed);
  }

  const bool gbps = memory_bound(*f);
  const double base_ms = results.front().timed ? results.front().timing.stats.median : 0;
  std::cout << fmt::format("{:>8} {:>12} {:>8} {:>11} {:>9} {:>11}  {}\n", "threads", "median ms",
                           "noise", gbps ? "GB/s" : "GFLOP/s", "speed-up", "efficiency", "check");
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const int t = counts[i];
    std::string check = r.status != "ok" ? r.status + ": " + r.reason
                        : !r.checked     ? "-"
                        : r.check.passed ? "pass"
                                         : r.check.summary();
    if (static_cast<unsigned>(t) > hw && hw > 0) check += "  (oversubscribed)";
    if (!r.timed) {
      std::cout << fmt::format("{:>8} {:>12} {:>8} {:>11} {:>9} {:>11}  {}\n", t, "-", "-", "-",
                               "-", "-", check);
      continue;
    }
    const double ms = r.timing.stats.median, speedup = base_ms > 0 ? base_ms / ms : 0;
    std::cout << fmt::format("{:>8} {:>12.4f} {:>7.1f}% {:>11.2f} {:>8.2f}x {:>10.0f}%  {}\n", t,
                             ms, 100 * r.timing.stats.rel_noise, gbps ? r.gbps : r.tflops * 1e3,
                             speedup, 100 * speedup / t, check);
  }

  if (!o.json_path.empty()) {
    // The usual result records (to_json, as write_json writes them), plus the thread count and
    // the host CPU, which the harness's records do not carry.
    nlohmann::json arr = nlohmann::json::array();
    for (size_t i = 0; i < results.size(); ++i) {
      nlohmann::json j = to_json(results[i]);
      j["cpu_threads"] = counts[i];
      j["host_cpu"] = {{"model", cpu_model()}, {"hardware_threads", hw}};
      arr.push_back(std::move(j));
    }
    if (o.json_path == "-") {
      std::cout << arr.dump(1) << "\n";
    } else {
      std::ofstream out(o.json_path);
      if (!out) throw UsageError("cannot write " + o.json_path);
      out << arr.dump(1) << "\n";
    }
  }
  if (!o.plot.empty()) {
    const std::string cmd = "python3 " + std::string(KLAB_SCRIPTS_DIR) +
                            "/plot_scaling.py --out '" + o.plot + "' '" + o.json_path + "'";
    if (std::system(cmd.c_str()) != 0)
      throw UsageError(
          "plotting failed (needs python3 with matplotlib; scripts/setup.sh installs it): " + cmd);
    std::cerr << "wrote " << o.plot << "\n";
  }
  return failed ? 1 : 0;
}

}  // namespace

void add_scaling_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<ScalingOptions>();
  auto* cmd = app.add_subcommand(
      "scaling", "a CPU rung at 1, 2, 4, ... threads: speed-up and parallel efficiency");
  cmd->add_option("variant", o->variant, "a CPU variant id, e.g. sgemm.cpu05_threads_simd")
      ->required();
  add_shape_option(cmd, o->shape,
                   "problem dimensions (default: the family's first headline shape)");
  cmd->add_option("--dtype", o->dtype, "dtype (default: the variant's first)");
  cmd->add_option("--max-threads", o->max_threads,
                  "largest thread count (default: KLAB_CPU_THREADS or all hardware threads)")
      ->check([](const std::string& v) {
        return std::atoi(v.c_str()) >= 1 ? std::string() : "must be at least 1, got " + v;
      });
  cmd->add_option("--json", o->json_path,
                  "write the result records (with cpu_threads) here ('-' for stdout)")
      ->check(writable_path_or_stdout);
  cmd->add_option("--plot", o->plot,
                  "also plot throughput and efficiency against threads (.png, .svg or .pdf; needs "
                  "--json)")
      ->check(plot_path);
  add_sampling_options(cmd, o->sampling);
  cmd->add_flag("--no-check", o->no_check, "benchmark only");
  out.emplace_back(cmd, [o] { return run_scaling(*o); });
}

}  // namespace klab::cli

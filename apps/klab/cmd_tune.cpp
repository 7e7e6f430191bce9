// klab tune VARIANT: benchmarks every configuration of a tunable rung (klab/harness/tunable.hpp)
// that can run the problem, through the same run_variant as every other command (checked once
// against the reference, then timed), prints them side by side and stores the fastest that
// passed its check, per device name and shape class, in the tune cache
// ($KLAB_CACHE_DIR or ~/.cache/klab, tune-<device>.json) and, with --commit / --commit-to, in a
// committed table. The tunable variant reads those tables at run time: cache, then committed
// table, then its built-in guess. Configurations that cannot run the problem are recorded as
// skipped and never launched; one that fails its check is recorded and never chosen.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "kernels/register.hpp"
#include "klab/build_info.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/tunable.hpp"
#include "klab/harness/tune_table.hpp"

namespace klab::cli {

namespace {

struct TuneOptions {
  std::string variant, shape, dtype, json_path, commit_to, configs;
  bool commit = false, no_cache = false, interleave = false;
  int rounds = 1;
  SamplingOptions sampling;
};

std::string tunable_ids() {
  std::string ids;
  for (const auto& t : registry().tunables()) ids += (ids.empty() ? "" : ", ") + t.variant;
  return ids.empty() ? "none in this build" : ids;
}

/// "2,5-7" -> {2, 5, 6, 7}: the configurations --configs selects (all when empty).
std::vector<bool> selected_configs(const std::string& list, int n) {
  std::vector<bool> on(static_cast<size_t>(n), list.empty());
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    int lo = -1, hi = -1;
    char dash = 0;
    char rest = 0;
    const int got = std::sscanf(item.c_str(), "%d%c%d%c", &lo, &dash, &hi, &rest);
    if (got == 1) hi = lo;
    if (!(got == 1 || (got == 3 && dash == '-')) || lo < 0 || hi < lo || hi >= n)
      throw UsageError("--configs: '" + item + "' is not an index or range within 0.." +
                       std::to_string(n - 1) + " (e.g. --configs 0,2,5-7)");
    for (int i = lo; i <= hi; ++i) on[static_cast<size_t>(i)] = true;
    pos = end + 1;
  }
  return on;
}

bool good(const Result& r) { return r.status == "ok" && r.checked && r.check.passed && r.timed; }

int run_tune(const TuneOptions& o) {
  const Registry& reg = registry();  // builds the registry, which registers the tunables
  const Tunable* t = reg.tunable(o.variant);
  if (!t) {
    reg.variant(o.variant);  // an unknown id says so (and lists what exists)
    throw UsageError(o.variant + " has no configurations to tune (tunable: " + tunable_ids() + ")");
  }
  if (o.interleave && o.rounds > 1)
    throw UsageError("--interleave and --rounds both interleave the configurations: pick one");
  const size_t dot = t->variant.find('.');
  const Family& f = reg.family(t->variant.substr(0, dot));
  Problem p =
      o.shape.empty()
          ? f.headline.front()
          : make_problem(f, o.shape,
                         o.dtype.empty() ? std::string(dtype_name(f.dtypes.front())) : o.dtype);
  if (o.shape.empty() && !o.dtype.empty()) {
    p.dtype = parse_dtype(o.dtype);
    validate_problem(f, p);
  }

  // The commit target must be a tune table (or absent) before any GPU work.
  std::string commit_path = o.commit_to;
  if (o.commit && commit_path.empty()) commit_path = committed_table_path(t->committed_table);
  if (!commit_path.empty()) load_tune_table(commit_path, true);

  const std::vector<bool> chosen = selected_configs(o.configs, static_cast<int>(t->configs.size()));
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError("klab tune needs a GPU, and there is none: " + d.absent_reason);
  reg.variant(t->variant);  // registered in this build

  const std::string cls = t->shape_class(p);
  const TunedChoice before = t->current(p);
  const int n = static_cast<int>(t->configs.size());

  // Which configurations can run the problem: decided up front, the others are never launched.
  std::vector<Variant> variants;
  std::vector<Status> why(static_cast<size_t>(n));
  int runnable = 0;
  for (int i = 0; i < n; ++i) {
    variants.push_back(t->make(i));
    why[static_cast<size_t>(i)] = chosen[static_cast<size_t>(i)]
                                      ? t->can_implement(i, p)
                                      : Status::no("not selected (--configs)");
    if (why[static_cast<size_t>(i)].ok()) why[static_cast<size_t>(i)] = can_run(variants.back(), p);
    runnable += why[static_cast<size_t>(i)].ok();
  }
  if (runnable == 0)
    throw UsageError("no configuration of " + t->variant + " can run " + p.str() + ": " +
                     why.front().reason);

  RunOptions opt;
  opt.check = true;
  opt.bench = true;
  opt.dists = {Dist::normal};
  o.sampling.apply(opt);
  ceilings_for_this_device();  // measured (once per device) before the progress line starts

  std::cout << "## tune " << t->variant << " " << p.str() << "  (shape class " << cls << ", "
            << d.name << ")\n"
            << runnable << " of " << n << " configurations can run it; now using cfg"
            << before.config << " from " << before.describe() << "\n";

  Progress progress(runnable * o.rounds, o.sampling.quiet);
  ProblemInputs shared;  // one problem: its inputs and reference made once for every configuration
  // Round k runs every runnable configuration once, in index order, with its share of
  // --max-time; only the first round checks. One configuration after another in a single round
  // lets the GPU's power state rank them (the first runs cool); rounds spread that drift over all.
  std::vector<std::vector<Result>> per(static_cast<size_t>(n));
  if (o.interleave) {
    // Launch by launch instead (klab bench --interleave): every round one cold sample of each
    // configuration, the order drawn at random, so that each median is taken under the clocks and
    // power state its neighbours' are.
    std::vector<const Variant*> runnable_variants;
    std::vector<int> index;
    for (int i = 0; i < n; ++i)
      if (why[static_cast<size_t>(i)].ok()) {
        runnable_variants.push_back(&variants[static_cast<size_t>(i)]);
        index.push_back(i);
      }
    std::vector<Result> timed;
    bench_problem_interleaved(f, runnable_variants, p, opt, shared, progress, timed);
    for (size_t j = 0; j < index.size(); ++j)
      per[static_cast<size_t>(index[j])].push_back(std::move(timed[j]));
  } else {
    for (int k = 0; k < o.rounds; ++k) {
      RunOptions round = opt;
      round.check = k == 0;
      round.bench_cfg.max_time_s = opt.bench_cfg.max_time_s / o.rounds;
      for (int i = 0; i < n; ++i) {
        if (!why[static_cast<size_t>(i)].ok()) continue;
        const Variant& v = variants[static_cast<size_t>(i)];
        progress.step(v.info.id + " " + t->configs[static_cast<size_t>(i)] +
                      (o.rounds > 1 ? " round " + std::to_string(k + 1) : ""));
        per[static_cast<size_t>(i)].push_back(run_variant(f, v, p, round, shared));
      }
    }
  }
  std::vector<Result> results;
  bool failed = false;
  for (int i = 0; i < n; ++i) {
    const Variant& v = variants[static_cast<size_t>(i)];
    if (!why[static_cast<size_t>(i)].ok()) {
      Result r;
      r.variant = v.info.id;
      r.family = f.name;
      r.problem = p;
      r.device_kind = "gpu";
      r.status = "skipped";
      r.reason = why[static_cast<size_t>(i)].reason;
      r.timestamp = now_iso8601();
      results.push_back(std::move(r));
      continue;
    }
    auto& rs = per[static_cast<size_t>(i)];
    results.push_back(o.rounds > 1 ? merge_rounds(f, std::move(rs)) : std::move(rs.front()));
    const Result& r = results.back();
    failed |= r.status == "error" || (r.checked && !r.check.passed);
  }

  int best = -1;
  for (int i = 0; i < n; ++i) {
    const Result& r = results[static_cast<size_t>(i)];
    if (good(r) && (best < 0 ||
                    r.timing.stats.median < results[static_cast<size_t>(best)].timing.stats.median))
      best = i;
  }
  const double best_ms = best >= 0 ? results[static_cast<size_t>(best)].timing.stats.median : 0;

  std::cout << fmt::format("\n{:>5}  {:<28} {:>11} {:>7} {:>9} {:>8} {:>8}  {}\n", "cfg",
                           "configuration", "median ms", "noise", "TFLOP/s", "% ceil", "vs best",
                           "check");
  for (int i = 0; i < n; ++i) {
    const Result& r = results[static_cast<size_t>(i)];
    std::string check = r.status != "ok" ? r.status + ": " + r.reason
                        : !r.checked     ? "-"
                        : r.check.passed ? "pass"
                                         : r.check.summary();
    std::string note;
    if (i == best) note += "  <- winner";
    if (i == before.config) note += "  (was in use: " + before.source + ")";
    const std::string name = t->configs[static_cast<size_t>(i)];
    if (!r.timed) {
      std::cout << fmt::format("{:>5}  {:<28} {:>11} {:>7} {:>9} {:>8} {:>8}  {}{}\n", i, name, "-",
                               "-", "-", "-", "-", check, note);
      continue;
    }
    const double ms = r.timing.stats.median;
    std::cout << fmt::format(
        "{:>5}  {:<28} {:>11.4f} {:>6.1f}% {:>9.2f} {:>7.1f}% {:>7.2f}x  {}{}\n", i, name, ms,
        100 * r.timing.stats.rel_noise, r.tflops, r.ceiling.pct, best_ms > 0 ? ms / best_ms : 0,
        check, note);
  }

  if (best < 0) {
    std::cout << "\nno configuration passed its check: nothing stored\n";
  } else {
    const Result& w = results[static_cast<size_t>(best)];
    TuneEntry e;
    e.device = d.name;
    e.variant = t->variant;
    e.shape_class = cls;
    e.config = best;
    e.config_name = t->configs[static_cast<size_t>(best)];
    e.median_ms = w.timing.stats.median;
    e.problem = p.str();
    e.timestamp = now_iso8601();
    e.git_sha = build::kGitSha;
    std::cout << "\nwinner for " << cls << " on " << d.name << ": cfg" << best << " "
              << e.config_name << ", " << fmt::format("{:.4f} ms", e.median_ms);
    if (before.config != best && before.config >= 0 && before.config < n &&
        results[static_cast<size_t>(before.config)].timed)
      std::cout << fmt::format(
          " ({:.2f}x faster than cfg{})",
          results[static_cast<size_t>(before.config)].timing.stats.median / e.median_ms,
          before.config);
    std::cout << "\n";
    // A subset (--configs) may leave out the configuration in use: its winner has then not been
    // compared with it, and must not replace it.
    const bool in_use_ran = before.config >= 0 && before.config < n &&
                            good(results[static_cast<size_t>(before.config)]);
    if (!o.configs.empty() && !in_use_ran) {
      std::cout << "not stored: the configuration in use (cfg" << before.config
                << ") was not among --configs, so this winner was not compared with it; add "
                << before.config << " to --configs to store the winner\n";
    } else if (!o.no_cache) {
      const std::string cache = tune_cache_path(d.name);
      TuneTable table = load_tune_table(cache);  // a corrupt cache is replaced
      table.put(e);
      save_tune_table(table, cache);
      std::cout << "stored in the tune cache: " << cache << "\n";
    }
    if (!o.configs.empty() && !in_use_ran) {
      // nothing stored (said above)
    } else if (!commit_path.empty()) {
      record_tune_entry(e, commit_path);
      std::cout << "committed to " << commit_path << "\n";
    } else {
      std::cout << "to make it the default for every checkout: add --commit (writes "
                << committed_table_path(t->committed_table) << ")\n";
    }
  }

  if (!o.json_path.empty()) {
    // The usual result records (to_json, as write_json writes them) plus what was tuned.
    nlohmann::json arr = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      nlohmann::json j = to_json(results[static_cast<size_t>(i)]);
      j["tune"] = {{"variant", t->variant},
                   {"config", i},
                   {"config_name", t->configs[static_cast<size_t>(i)]},
                   {"shape_class", cls},
                   {"winner", i == best},
                   {"in_use_before", i == before.config},
                   {"in_use_before_source", i == before.config ? before.describe() : ""}};
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
  return failed || best < 0 ? 1 : 0;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand("tune",
                                 "benchmark every configuration of a tunable rung; store the "
                                 "fastest per device and shape class");
  cmd->add_option("variant", o->variant, "a tunable variant id, e.g. sgemm.v10_autotuned")
      ->required();
  add_shape_option(cmd, o->shape,
                   "problem dimensions (default: the family's first headline shape)");
  cmd->add_option("--dtype", o->dtype, "dtype (default: the family's first)");
  cmd->add_option("--json", o->json_path,
                  "write every configuration's result record here ('-' for stdout)")
      ->check(writable_path_or_stdout);
  cmd->add_flag("--commit", o->commit,
                "also store the winner in the committed table (e.g. kernels/sgemm/tuned.json)");
  cmd->add_option("--commit-to", o->commit_to, "also store the winner in this tune table file")
      ->check(writable_path);
  cmd->add_flag("--no-cache", o->no_cache, "do not store the winner in the tune cache");
  cmd->add_option("--configs", o->configs,
                  "only these configuration indices, e.g. 0,2,5-7 (default: all); the winner "
                  "is stored only when the configuration in use is among them");
  cmd->add_option("--rounds", o->rounds,
                  "measure the configurations in this many interleaved rounds, samples pooled "
                  "(--max-time split between them): clock and power drifts fall on all")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--interleave", o->interleave,
                "time the configurations launch by launch, one cold sample of each a round, the "
                "order drawn at random (klab bench --interleave): each median under its "
                "neighbours' clocks and power state");
  add_sampling_options(cmd, o->sampling);
  out.emplace_back(cmd, [o] { return run_tune(*o); });
}

}  // namespace klab::cli

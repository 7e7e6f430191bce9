// klab list / run / check / bench / sweep / ceilings.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/klab/cli.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/tune_table.hpp"

namespace klab::cli {

namespace {

struct Selection {
  const Family* family;
  std::vector<const Variant*> variants;
  bool explicit_variant = false;  // the user named variants, not a family
};

// Families and/or variant ids -> what to run, in registry order. Empty targets: everything
// but the sabotaged families (wrong or slow on purpose), unless `with_sabotaged` (klab list).
std::vector<Selection> select(const std::vector<std::string>& targets,
                              bool with_sabotaged = false) {
  const Registry& reg = registry();
  std::vector<Selection> out;
  if (targets.empty()) {
    for (const auto& f : reg.families()) {
      if (f.sabotaged && !with_sabotaged) continue;
      Selection s{&f, {}, false};
      for (const auto& v : f.ladder) s.variants.push_back(&v);
      out.push_back(s);
    }
    return out;
  }
  for (const auto& t : targets) {
    if (t.find('.') == std::string::npos) {
      const Family& f = reg.family(t);
      Selection s{&f, {}, false};
      for (const auto& v : f.ladder) s.variants.push_back(&v);
      out.push_back(s);
    } else {
      auto [f, v] = reg.variant(t);
      auto it = std::find_if(out.begin(), out.end(), [&](const Selection& s) {
        return s.family == f && s.explicit_variant;
      });
      if (it == out.end())
        out.push_back({f, {v}, true});
      else
        it->variants.push_back(v);
    }
  }
  return out;
}

std::vector<Dist> dists_of(const std::string& d) {
  if (d == "all") return {Dist::normal, Dist::uniform, Dist::heavy};
  return {parse_dist(d)};
}

// Problems for a selection: --shape (validated now, before any GPU work) or the family's own.
// --dtype alone filters the family's own problems; with --shape it defaults to the first dtype.
std::vector<Problem> problems_of(const Common& c, const Family& f, bool with_awkward) {
  if (c.shape.empty() && c.misalign != 0)
    throw UsageError("--misalign needs --shape (the family's own shapes set their own alignment)");
  if (c.shape.empty() && !c.layout.empty())
    throw UsageError("--layout needs --shape (the family's own shapes set their own layout)");
  if (!c.shape.empty()) {
    std::vector<Problem> ps = {make_problem(
        f, c.shape, c.dtype.empty() ? std::string(dtype_name(f.dtypes.front())) : c.dtype,
        c.misalign, c.layout)};
    // --awkward with --shape: the family's awkward shapes too, as they are.
    if (with_awkward && c.awkward) ps.insert(ps.end(), f.awkward.begin(), f.awkward.end());
    return ps;
  }
  std::vector<Problem> ps = f.headline;
  if (with_awkward) ps.insert(ps.end(), f.awkward.begin(), f.awkward.end());
  if (!c.dtype.empty()) {
    const DType t = parse_dtype(c.dtype);
    if (std::find(f.dtypes.begin(), f.dtypes.end(), t) == f.dtypes.end())
      throw UsageError(f.name + " does not take dtype " + c.dtype);
    std::erase_if(ps, [&](const Problem& p) { return p.dtype != t; });
  }
  return ps;
}

// No GPU: a named GPU variant is an error; a family runs its CPU rungs only, said on stderr in
// one line, and a selection left with no rung at all is an error.
void apply_gpu_policy(std::vector<Selection>& sel, bool allow_cpu_fallback) {
  const DeviceInfo& d = device_info();
  if (d.present) return;
  int left_out = 0, kept = 0;
  std::string first_gpu;
  for (auto& s : sel) {
    std::vector<const Variant*> cpu;
    for (const Variant* v : s.variants) {
      if (v->info.device == Device::cpu) {
        cpu.push_back(v);
        continue;
      }
      if (s.explicit_variant || !allow_cpu_fallback)
        throw UsageError(v->info.id + " needs a GPU, and there is none: " + d.absent_reason);
      if (first_gpu.empty()) first_gpu = v->info.id;
      ++left_out;
    }
    s.variants = cpu;
    kept += static_cast<int>(cpu.size());
  }
  if (left_out > 0 && kept == 0)
    throw UsageError(first_gpu + (left_out > 1 ? " and the other selected rungs need" : " needs") +
                     " a GPU, and there is none: " + d.absent_reason);
  if (left_out > 0)
    std::cerr << "klab: no GPU here (" << d.absent_reason << "): " << left_out
              << " GPU variant(s) left out, running the " << kept << " CPU variant(s)\n";
}

// --device gpu|cpu: a family's rungs of the other kind are left out; a named variant of the
// other kind is an error (it was asked for by name).
void apply_device_filter(std::vector<Selection>& sel, const std::string& device) {
  if (device == "all") return;
  if (device == "gpu" && !device_info().present)
    throw UsageError("--device gpu needs a GPU, and there is none: " + device_info().absent_reason);
  const Device want = device == "gpu" ? Device::gpu : Device::cpu;
  for (auto& s : sel) {
    if (s.explicit_variant) {
      for (const Variant* v : s.variants)
        if (v->info.device != want)
          throw UsageError(v->info.id + " is not a " + device + " variant (--device " + device +
                           ")");
      continue;
    }
    std::erase_if(s.variants, [&](const Variant* v) { return v->info.device != want; });
  }
}

// Explicit variant + explicit shape that the variant cannot run: an error, with the reason. The
// explicit shape is each selection's first problem; the awkward shapes --awkward adds after it
// are the family's, and a variant that refuses one is reported as skipped there, as it is when
// the family is selected whole.
void check_implementable(const std::vector<Selection>& sel,
                         const std::vector<std::vector<Problem>>& problems, const Common& c) {
  if (c.shape.empty()) return;
  for (size_t i = 0; i < sel.size(); ++i) {
    if (!sel[i].explicit_variant || problems[i].empty()) continue;
    const Problem& p = problems[i].front();
    for (const Variant* v : sel[i].variants)
      if (Status st = can_run(*v, p); !st.ok())
        throw UsageError(v->info.id + " cannot run " + p.str() + ": " + st.reason);
  }
}

RunOptions options_of(const Common& c, bool check, bool bench, std::vector<Dist> dists) {
  RunOptions o;
  o.check = check;
  o.bench = bench;
  o.dists = std::move(dists);
  o.seed = c.seed;
  o.bench_cfg.hot = c.hot;
  o.bench_cfg.target_rel_noise = c.noise;
  o.bench_cfg.max_time_s = c.max_time;
  o.bench_cfg.samples_path = c.samples_path;
  return o;
}

// A tunable rung's records from `first` on say which configuration ran and where the choice came
// from (the tune cache, the committed table, the built-in guess), and whether the committed
// table was where the rung looks for it: run from a folder without it (a build carried to another
// machine), a tuned dispatch times its built-in guesses, and its records must say so.
void attach_tuned_choices(std::vector<Result>& fam, size_t first) {
  for (size_t j = first; j < fam.size(); ++j) {
    Result& r = fam[j];
    const Tunable* t = registry().tunable(r.variant);
    if (!t || !t->current || r.status != "ok") continue;
    const TunedChoice c = t->current(r.problem);
    if (c.config < 0 || c.config >= static_cast<int>(t->configs.size())) continue;
    r.tuned.config = t->configs[static_cast<size_t>(c.config)];
    r.tuned.source = c.source;
    r.tuned.path = c.path;
    std::error_code ec;
    r.tuned.committed_table = std::filesystem::exists(committed_table_path(t->committed_table), ec);
  }
}

// Runs selections x problems, prints one table per family, writes JSON; exit 1 on a failed check.
int execute(const Common& c, std::vector<Selection> sel, bool with_awkward, const RunOptions& opt,
            bool cpu_fallback) {
  if (c.interleave && c.rounds > 1)
    throw UsageError("--interleave and --rounds both interleave the variants: pick one");
  if (c.interleave && c.hot)
    throw UsageError("--interleave times cold launches only (L2 flushed each sample): drop --hot");
  if (!c.samples_path.empty() && !c.interleave)
    throw UsageError("--samples writes an interleaved benchmark's samples: add --interleave");
  if (!c.samples_path.empty())  // each problem's samples are appended: start from an empty file
    std::ofstream(c.samples_path, std::ios::trunc);
  std::vector<std::vector<Problem>> problems;
  for (const auto& s : sel) problems.push_back(problems_of(c, *s.family, with_awkward));
  check_implementable(sel, problems, c);
  apply_device_filter(sel, c.device);
  apply_gpu_policy(sel, cpu_fallback);
  if (std::all_of(sel.begin(), sel.end(), [](const Selection& s) { return s.variants.empty(); }))
    throw UsageError("nothing to run: no variant of the selection is left (--device " + c.device +
                     ")");
  const int rounds = opt.bench ? c.rounds : 1;
  int total = 0;
  for (size_t i = 0; i < sel.size(); ++i)
    total += static_cast<int>(sel[i].variants.size() * problems[i].size()) * rounds;
  if (device_info().present && opt.bench) {
    // Ceilings first (cached per device), so the progress line is honest about the long step.
    if (!load_cached_ceilings())
      std::cerr << "measuring this device's bandwidth ceilings once (cached at "
                << ceilings_cache_path() << ")\n";
    ceilings_for_this_device();
  }
  Progress progress(total, c.quiet);
  std::vector<Result> all;
  bool failed = false;
  for (size_t i = 0; i < sel.size(); ++i) {
    std::vector<Result> fam;
    for (const Problem& p : problems[i]) {
      // The problem's inputs, reference and vendor outputs are made once, for all of them.
      ProblemInputs shared;
      const size_t first = fam.size();
      if (opt.bench && c.interleave) {
        bench_problem_interleaved(*sel[i].family, sel[i].variants, p, opt, shared, progress, fam);
      } else {
        // Round k runs every variant once; only the first checks (merge_rounds keeps its check).
        std::vector<std::vector<Result>> per(sel[i].variants.size());
        for (int k = 0; k < rounds; ++k) {
          RunOptions o = opt;
          o.check = opt.check && k == 0;
          o.bench_cfg.max_time_s = opt.bench_cfg.max_time_s / rounds;
          for (size_t j = 0; j < sel[i].variants.size(); ++j) {
            const Variant* v = sel[i].variants[j];
            progress.step(v->info.id + " " + p.shape.str() + " " +
                          std::string(dtype_name(p.dtype)) +
                          (rounds > 1 ? " round " + std::to_string(k + 1) : ""));
            per[j].push_back(run_variant(*sel[i].family, *v, p, o, shared));
          }
        }
        for (auto& rs : per) fam.push_back(merge_rounds(*sel[i].family, std::move(rs)));
      }
      for (size_t j = first; j < fam.size(); ++j)
        failed |= fam[j].status == "error" || (fam[j].checked && !fam[j].check.passed);
      attach_tuned_choices(fam, first);
      // Rewritten after every problem: a run stopped by a time limit keeps what it measured.
      attach_baselines(fam);
      if (!c.json_path.empty() && c.json_path != "-") {
        std::vector<Result> so_far = all;
        so_far.insert(so_far.end(), fam.begin(), fam.end());
        write_json(so_far, c.json_path);
      }
    }
    if (!fam.empty()) {
      std::cout << "\n## " << sel[i].family->name << " — " << sel[i].family->summary << "\n";
      std::cout << format_table(fam, false) << tuned_summary(fam, false);
      if (const std::string ps = paired_summary(fam); !ps.empty())
        std::cout << "\nInterleaved launch by launch with the baseline:\n" << ps;
    }
    all.insert(all.end(), fam.begin(), fam.end());
  }
  if (c.json_path == "-") write_json(all, c.json_path);
  failed |= report_above_ceiling(all) > 0;
  return failed ? 1 : 0;
}

}  // namespace

void bench_problem_interleaved(const Family& f, const std::vector<const Variant*>& variants,
                               const Problem& p, const RunOptions& opt, ProblemInputs& shared,
                               Progress& progress, std::vector<Result>& fam) {
  const size_t first = fam.size();
  std::vector<std::shared_ptr<HeldLaunches>> held(variants.size());
  for (size_t j = 0; j < variants.size(); ++j) {
    const Variant* v = variants[j];
    progress.step(v->info.id + " " + p.shape.str() + " " + std::string(dtype_name(p.dtype)));
    fam.push_back(run_variant_held(f, *v, p, opt, shared, &held[j]));
  }
  std::vector<Result*> timed;
  std::vector<std::shared_ptr<HeldLaunches>> sets;
  for (size_t j = 0; j < variants.size(); ++j)
    if (held[j]) {
      timed.push_back(&fam[first + j]);
      sets.push_back(held[j]);
    }
  try {
    bench_held_interleaved(f, timed, sets, opt.bench_cfg);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {  // one failed launch fails the interleaved group
    for (Result* r : timed) {
      r->status = "error";
      r->reason = std::string("interleaved benchmark: ") + e.what();
      r->timed = false;
    }
  }
}

int cmd_list(const Common& c) {
  for (const auto& s : select(c.targets, true)) {
    const Family& f = *s.family;
    std::string dims;
    for (const auto& d : f.dims) {
      dims += (dims.empty() ? "" : ",") + d;
      for (const auto& [name, value] : f.default_dims)
        if (name == d) dims += "=" + std::to_string(value);  // may be left out: this value
    }
    std::cout << f.name << "  (" << dims << ")  " << f.summary
              << (f.sabotaged ? "  [sabotaged: not in `klab run`; try `klab doctor`]" : "") << "\n";
    size_t width = 40;  // the id column: the family's longest id, so the columns stay aligned
    for (const Variant* v : s.variants) width = std::max(width, v->info.id.size());
    for (const Variant* v : s.variants) {
      std::string dt;
      for (DType t : v->info.dtypes) dt += (dt.empty() ? "" : ",") + std::string(dtype_name(t));
      std::cout << fmt::format("  {:<{}} {:<4} {:<9} {:<10} {}{}\n", v->info.id, width,
                               v->info.device == Device::gpu ? "gpu" : "cpu",
                               v->info.min_sm ? "sm_" + std::to_string(v->info.min_sm) : "-", dt,
                               v->info.summary, v->info.baseline ? "  [baseline]" : "");
    }
  }
  return 0;
}

int cmd_run(const Common& c) {
  std::vector<Selection> sel = select(c.targets);  // bad targets: refused before anything else
  for (const auto& s : sel)
    if (s.family->sabotaged)
      throw UsageError(s.family->name +
                       " is wrong or slow on purpose: not part of `klab run` (use `klab check` or "
                       "`klab doctor` on its variants)");
  const DeviceInfo& d = device_info();
  if (d.present)
    std::cout << "Device: " << d.name << ", " << d.sm_count << " SMs, sm_" << d.sm() << ", driver "
              << d.driver << "\n";
  return execute(c, std::move(sel), false, options_of(c, true, true, {Dist::normal}), true);
}

int cmd_check(const Common& c) {
  return execute(c, select(c.targets), c.awkward || c.shape.empty(),
                 options_of(c, true, false, dists_of(c.dist)), true);
}

int cmd_bench(const Common& c) {
  if (c.targets.empty()) throw UsageError("bench needs a family or variant (see `klab list`)");
  return execute(c, select(c.targets), false,
                 options_of(c, true, true, dists_of(c.dist == "all" ? "normal" : c.dist)), true);
}

int cmd_sweep(const Common& c, const std::vector<int>& blocks, const std::string& plot) {
  if (c.targets.size() != 1 || c.targets[0].find('.') == std::string::npos)
    throw UsageError("sweep takes exactly one variant id (see `klab list`)");
  auto [f, v] = registry().variant(c.targets[0]);
  if (!v->info.sweepable) throw UsageError(v->info.id + " has no block-size knob to sweep");
  for (int b : blocks)
    if (b < 32 || b > 1024 || b % 32 != 0)
      throw UsageError("block sizes must be multiples of 32 in [32, 1024], got " +
                       std::to_string(b));
  const Problem p = c.shape.empty()
                        ? f->headline.front()
                        : make_problem(*f, c.shape, c.dtype.empty() ? "f32" : c.dtype, c.misalign);
  if (Status st = can_run(*v, p); !st.ok())
    throw UsageError(v->info.id + " cannot run " + p.str() + ": " + st.reason);
  if (v->info.device == Device::gpu && !device_info().present)
    throw UsageError(v->info.id +
                     " needs a GPU, and there is none: " + device_info().absent_reason);
  RunOptions opt = options_of(c, true, true, {Dist::normal});
  if (device_info().present) ceilings_for_this_device();
  Progress progress(static_cast<int>(blocks.size()), c.quiet);
  std::vector<Result> all;
  bool failed = false;
  ProblemInputs shared;  // one problem: its inputs and reference made once for every block size
  for (int b : blocks) {
    progress.step(v->info.id + " block=" + std::to_string(b));
    opt.block_threads = b;
    all.push_back(run_variant(*f, *v, p, opt, shared));
    failed |= all.back().status == "error" || (all.back().checked && !all.back().check.passed);
  }
  std::cout << "\n## sweep " << v->info.id << " " << p.str() << "\n" << format_table(all, false);
  if (!c.json_path.empty()) write_json(all, c.json_path);
  if (!plot.empty()) {
    if (c.json_path.empty() || c.json_path == "-")
      throw UsageError("--plot needs --json FILE (the plot is drawn from it)");
    cmd_report({c.json_path}, "", plot, "", "", 0);
  }
  return failed ? 1 : 0;
}

int64_t parse_byte_size(const std::string& text, const std::string& option) {
  auto bad = [&](const std::string& why) { return UsageError(option + " '" + text + "': " + why); };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) throw bad("a size is digits, then K, M or G (e.g. 32M)");
  if (digits > 13) throw bad("above 1 TiB");
  std::string unit = text.substr(digits);
  if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
  const int64_t n = std::stoll(text.substr(0, digits));
  const int64_t scale = unit.empty()  ? 1
                        : unit == "K" ? int64_t(1) << 10
                        : unit == "M" ? int64_t(1) << 20
                        : unit == "G" ? int64_t(1) << 30
                                      : 0;
  if (scale == 0) throw bad("the unit is K, M or G (powers of 1024)");
  if (n > (int64_t(1) << 40) / scale) throw bad("above 1 TiB");
  const int64_t bytes = n * scale;
  if (bytes < 16 || bytes % 16 != 0) throw bad("not a positive multiple of 16 bytes");
  return bytes;
}

int cmd_ceilings(bool remeasure, const std::string& json_path,
                 const std::vector<std::string>& read_at) {
  std::vector<int64_t> sizes;  // parsed before anything touches a GPU
  for (const std::string& t : read_at) sizes.push_back(parse_byte_size(t, "--read-at"));
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError("ceilings needs a GPU, and there is none: " + d.absent_reason);
  for (size_t i = 0; i < sizes.size(); ++i)  // each measured alone: half the device at most
    if (sizes[i] > d.global_mem_bytes / 2)
      throw UsageError("--read-at '" + read_at[i] + "': above half the device's memory (" +
                       std::to_string(d.global_mem_bytes >> 20) + " MiB)");
  registry();  // registers the families' baseline probes (kernels/register_all.cpp)
  std::optional<Ceilings> c = remeasure ? std::nullopt : load_cached_ceilings();
  const bool cached = c.has_value();
  if (!c) {
    std::cerr << "measuring ceilings on " << d.name << "...\n";
    c = measure_ceilings(BenchConfig{});
    save_ceilings(*c);
  }
  std::cout << "Ceilings of " << c->device << (cached ? " (cached " : " (measured ") << c->timestamp
            << ", " << ceilings_cache_path() << ")\n";
  std::cout << fmt::format("{:<10} {:>12} {:>12} {:>8}  {}\n", "ceiling", "measured", "datasheet",
                           "% ds", "how");
  for (const auto& i : c->items)
    std::cout << fmt::format("{:<10} {:>8.0f} {:<4} {:>8.0f} {:<4}{:>7.1f}%  {}\n", i.name, i.value,
                             i.unit, i.datasheet, i.unit,
                             i.datasheet > 0 ? 100 * i.value / i.datasheet : 0.0, i.how);
  // The read bandwidth at each asked size, against the read ceiling (measured over 1 GiB).
  std::vector<SizedRead> reads;
  const Ceiling* read = c->find("read");
  if (!sizes.empty())
    std::cout << fmt::format("\n{:>14} {:>12} {:>14} {:>10}  {}\n", "read of bytes", "GB/s (p10)",
                             "GB/s (median)", "% of read", "how");
  for (int64_t bytes : sizes) {
    reads.push_back(measure_read_at(BenchConfig{}, bytes));
    const SizedRead& r = reads.back();
    std::cout << fmt::format("{:>14} {:>12.0f} {:>14.0f} {:>9.1f}%  {}\n", r.bytes, r.p10_gbps,
                             r.median_gbps,
                             read && read->value > 0 ? 100 * r.p10_gbps / read->value : 0.0, r.how);
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    nlohmann::json items = nlohmann::json::array();
    for (const auto& i : c->items)
      items.push_back({{"name", i.name},
                       {"unit", i.unit},
                       {"value", i.value},
                       {"datasheet", i.datasheet},
                       {"how", i.how}});
    nlohmann::json j = {{"device", c->device},
                        {"timestamp", c->timestamp},
                        {"ceilings", items},
                        {"machine", machine_json()}};
    if (!reads.empty()) {
      nlohmann::json ra = nlohmann::json::array();
      for (const SizedRead& r : reads)
        ra.push_back({{"bytes", r.bytes},
                      {"p10_gbps", r.p10_gbps},
                      {"median_gbps", r.median_gbps},
                      {"how", r.how}});
      j["read_at"] = ra;
    }
    out << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace klab::cli

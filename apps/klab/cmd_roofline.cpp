// klab roofline: the roofline of a device (datasheet or measured ceilings), the five model
// kernels placed on it, measured results placed on it, and a log-log plot.
// klab predict: for the operations in result JSONs, the bound the roofline predicts, the achieved
// percentage of the relevant ceiling and a verdict: the course's "predictions against measurements".
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/devices.hpp"
#include "klab/harness/roofline.hpp"

namespace klab::cli {

namespace fs = std::filesystem;
namespace rl = klab::roofline;
using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------
// Inputs: result JSONs (read with read_json), and ceilings JSONs (`klab ceilings --json`, or the
// cache file) found among them.

struct Record {
  Result r;
  std::string device;  ///< the CUDA device name stamped on the record ("" if absent)
};

struct Inputs {
  std::vector<Record> records;
  rl::Measured file_ceilings;    ///< from ceilings JSONs among the inputs
  rl::Measured record_ceilings;  ///< from the records' ceiling fields
  std::vector<std::string> files;
};

Inputs load_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  std::vector<Result> all;
  for_each_input_json(paths,
                      [&](const std::string&, const std::string& f, JsonKind kind, const json& j) {
                        in.files.push_back(f);
                        if (kind == JsonKind::ceilings)
                          each_ceiling(j, [&](const std::string& name, double v) {
                            keep_highest(in.file_ceilings, name, v);
                          });
                        else
                          for (Result& r : results_of(j, f)) all.push_back(std::move(r));
                      });
  // Every record's ceiling is a measurement of it, superseded record or not: keep the highest.
  for (const Result& r : all)
    if (r.ceiling.value > 0) keep_highest(in.record_ceilings, r.ceiling.name, r.ceiling.value);
  // A tune's configurations ("<rung>[cfgN]") are not rungs: the rung's own records stand for it.
  std::erase_if(all, [](const Result& r) { return r.variant.find('[') != std::string::npos; });
  // The newest of records that measured the same thing (several runs among the inputs).
  for (Result& r : newest_per_record(std::move(all))) {
    std::string dev;
    if (r.machine.contains("device") && r.machine["device"].is_object())
      dev = r.machine["device"].value("name", "");
    in.records.push_back({std::move(r), dev});
  }
  if (in.records.empty()) throw UsageError("no result records in the given inputs");
  return in;
}

/// --device, else the device most records were measured on, else this machine's GPU.
const DeviceSpec& resolve_device(const std::string& opt, const std::vector<Record>& recs) {
  if (!opt.empty()) return device_or_throw(opt);
  std::map<std::string, int> seen;
  for (const auto& rec : recs)
    if (rec.r.device_kind == "gpu" && !rec.device.empty()) ++seen[rec.device];
  if (!seen.empty()) {
    const auto most = std::max_element(
        seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (seen.size() > 1)
      std::cerr << "klab: note: the results come from " << seen.size() << " devices; using "
                << most->first << " (pass --device to choose)\n";
    if (const DeviceSpec* d = device_for_cuda_name(most->first)) return *d;
    throw UsageError("the results were measured on '" + most->first +
                     "', which is not in the device table; pass --device (known: " + device_keys() +
                     ")");
  }
  const DeviceInfo& d = device_info();
  if (!d.present)
    throw UsageError(
        "no GPU here to take the roofline of: pass --device NAME (known: " + device_keys() + ")");
  if (const DeviceSpec* s = device_for_cuda_name(d.name)) return *s;
  throw UsageError("this GPU ('" + d.name +
                   "') is not in the device table; pass --device (known: " + device_keys() + ")");
}

/// This GPU's cached ceilings, when this GPU is `spec` and `klab ceilings` has run (never measures).
rl::Measured cached_ceilings_for(const DeviceSpec& spec) {
  rl::Measured m;
  const DeviceInfo& d = device_info();
  if (!d.present || device_for_cuda_name(d.name) != &spec) return m;
  if (auto c = load_cached_ceilings())
    for (const auto& i : c->items)
      if (i.value > 0) m[i.name] = i.value;
  return m;
}

/// Measured ceilings from every source (ceilings files given, the records' own fields, this GPU's
/// cache): the highest value of each (keep_highest; a baseline that beats its own run's ceiling
/// proves that ceiling low).
rl::Measured merge(std::initializer_list<const rl::Measured*> sources) {
  rl::Measured out;
  for (const auto* s : sources)
    for (const auto& [k, v] : *s) keep_highest(out, k, v);
  return out;
}

bool usable(const Record& rec) {
  return rec.r.status == "ok" && rec.r.timed && rec.r.timing.stats.median > 0 &&
         rec.r.device_kind == "gpu" && (rec.r.counts.flops > 0 || rec.r.counts.bytes > 0);
}

/// Per (family, problem, dtype, mode): every baseline and the fastest other variant; or all.
std::vector<const Record*> select(const std::vector<Record>& recs, bool all) {
  std::map<std::string, std::vector<const Record*>> groups;
  for (const auto& rec : recs)
    if (usable(rec)) groups[rec.r.problem.str() + " " + rec.r.timing.mode].push_back(&rec);
  std::vector<const Record*> out;
  for (auto& [key, g] : groups) {
    std::stable_sort(g.begin(), g.end(),
                     [](const Record* a, const Record* b) { return a->r.variant < b->r.variant; });
    if (all) {
      out.insert(out.end(), g.begin(), g.end());
      continue;
    }
    const Record* best = nullptr;
    for (const Record* r : g)
      if (!r->r.baseline_variant &&
          (!best || r->r.timing.stats.median < best->r.timing.stats.median))
        best = r;
    for (const Record* r : g)
      if (r == best || r->r.baseline_variant) out.push_back(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Formatting

std::string fmt_time(double s) {
  if (s < 1e-6) return fmt::format("{:.0f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.1f} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

std::string fmt_ai(double ai) {
  if (ai == 0) return "0";
  if (ai < 1) return fmt::format("{:.3f}", ai);
  if (ai < 100) return fmt::format("{:.1f}", ai);
  return fmt::format("{:.0f}", ai);
}

std::string fmt_tflops(double flops_per_s) {
  const double t = flops_per_s / 1e12;
  return t >= 1000 ? fmt::format("{:.0f}", t) : fmt::format("{:.4g}", t);
}

std::string fmt_bw(double bytes_per_s) { return fmt::format("{:.0f} GB/s", bytes_per_s / 1e9); }

std::string short_variant(const std::string& id) {
  const auto dot = id.find('.');
  return dot == std::string::npos ? id : id.substr(dot + 1);
}

/// "4096x4096x4096": a shape without its dimension names, for plot labels.
std::string bare_shape(const Shape& s) {
  std::string out;
  for (const auto& [name, v] : s.dims) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

std::string dtype_of(const Record& rec) { return std::string(dtype_name(rec.r.problem.dtype)); }

/// The roof a record runs against: its precision, its unit, its family's memory ceiling; the
/// ceiling stamped on the record (measured in its run) counts as one more measurement (the
/// highest wins, as in merge).
rl::Measured measured_for(const Record& rec, const rl::Measured& measured, bool datasheet_only) {
  rl::Measured m = measured;
  if (!datasheet_only && rec.r.ceiling.value > 0)
    keep_highest(m, rec.r.ceiling.name, rec.r.ceiling.value);
  return m;
}

std::string memory_ceiling_of(const Record& rec) {
  return rl::is_memory_ceiling(rec.r.ceiling.name) ? rec.r.ceiling.name : "copy";
}

rl::Roof roof_for(const DeviceSpec& spec, const Record& rec, const rl::Measured& measured,
                  bool datasheet_only) {
  return rl::make_roof(spec, rl::precision_of(rec.r.problem.dtype),
                       rl::unit_for(rec.r.family, rec.r.problem.dtype, rec.r.ceiling.name),
                       measured_for(rec, measured, datasheet_only), memory_ceiling_of(rec));
}

std::string device_header(const DeviceSpec& d) {
  return fmt::format("{} ({}, {} SMs, {:.0f} MiB L2, {} MHz boost). Datasheet: {}{}.", d.name,
                     d.arch, d.sm_count, d.l2_mib, d.boost_mhz, d.source,
                     d.notes.empty() ? "" : "; " + d.notes);
}

// ---------------------------------------------------------------------------------------------
// Plotting: a spec JSON the script turns into a figure.

struct PlotSpec {
  json memory = json::array(), compute = json::array(), points = json::array();
  std::set<std::string> seen;
  void add_memory(const std::string& label, double bytes_per_s, bool measured) {
    if (seen.insert("m" + label).second)
      memory.push_back({{"label", label}, {"gbps", bytes_per_s / 1e9}, {"measured", measured}});
  }
  void add_compute(const std::string& label, double flops_per_s, bool measured) {
    if (seen.insert("c" + label).second)
      compute.push_back({{"label", label}, {"tflops", flops_per_s / 1e12}, {"measured", measured}});
  }
  /// Both the datasheet roofs and, where measured, the measured ones.
  void add_roofs(const DeviceSpec& spec, rl::Precision p, rl::Unit u, const rl::Measured& measured,
                 const std::string& mem) {
    const rl::Roof ds = rl::make_roof(spec, p, u);
    add_memory(fmt::format("DRAM {}, datasheet", fmt_bw(ds.bandwidth)), ds.bandwidth, false);
    add_compute(
        fmt::format("{} {} TFLOP/s, datasheet", rl::compute_roof_name(p, u), fmt_tflops(ds.peak)),
        ds.peak, false);
    const rl::Roof m = rl::make_roof(spec, p, u, measured, mem);
    if (m.memory_label != ds.memory_label)
      add_memory(fmt::format("{} {}", m.memory_label, fmt_bw(m.bandwidth)), m.bandwidth, true);
    if (m.compute_label != ds.compute_label)
      add_compute(
          fmt::format("{} {} TFLOP/s, measured", rl::compute_roof_name(p, u), fmt_tflops(m.peak)),
          m.peak, true);
  }
};

void check_plot_path(const std::string& out) {
  const std::string ext = fs::path(out).extension().string();
  if (!out.empty() && ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw UsageError("--plot wants a .png, .svg or .pdf file: " + out);
}

void plot(const PlotSpec& s, const std::string& title, const std::string& out) {
  const fs::path spec =
      fs::temp_directory_path() / fmt::format("klab-roofline-{}.json", static_cast<long>(getpid()));
  std::ofstream(spec) << json{
      {"title", title},
      {"memory", s.memory},
      {"compute", s.compute},
      {"points", s.points}}.dump(1);
  const std::string cmd = "python3 " + std::string(KLAB_SCRIPTS_DIR) +
                          "/plot_roofline.py --spec '" + spec.string() + "' --out '" + out + "'";
  const int rc = std::system(cmd.c_str());
  fs::remove(spec);
  if (rc != 0)
    throw UsageError(
        "plotting failed (needs python3 with matplotlib; scripts/setup.sh installs it): " + cmd);
  std::cerr << "wrote " << out << "\n";
}

void emit(const std::string& md, const std::string& out_md) {
  if (out_md.empty()) {
    std::cout << md;
    return;
  }
  std::ofstream out(out_md);
  if (!out) throw UsageError("cannot write " + out_md);
  out << md;
  std::cerr << "wrote " << out_md << "\n";
}

// ---------------------------------------------------------------------------------------------
// klab roofline

struct RooflineOpts {
  std::string device, dtype = "bf16", md, plot;
  std::vector<std::string> results;
  bool measured = false, datasheet = false, all = false, devices = false;
};

std::string devices_markdown() {
  std::string md =
      "| device | arch | SMs | boost MHz | L2 MiB | DRAM GB/s | fp64 | fp64 tensor | fp32 | tf32 | "
      "bf16/fp16 | fp8 | fp4 | "
      "source |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  auto tf = [](double v) { return v > 0 ? fmt::format("{:g}", v) : std::string("—"); };
  for (const auto& d : device_table())
    md += fmt::format(
        "| {} (`{}`) | {} | {} | {} | {:g} | {:g} | {} | {} | {} | {} | {} | {} | {} | {}{} |\n",
        d.name, d.key, d.arch, d.sm_count, d.boost_mhz, d.l2_mib, d.memory_gbps, tf(d.fp64),
        tf(d.fp64_tensor), tf(d.fp32), tf(d.tf32), tf(d.bf16), tf(d.fp8), tf(d.fp4), d.source,
        d.notes.empty() ? "" : "; " + d.notes);
  md +=
      "\nCompute peaks in dense TFLOP/s (no 2:4 sparsity), tensor figures with FP32 "
      "accumulation.\n";
  return md;
}

int cmd_roofline(const RooflineOpts& o) {
  if (o.devices) {
    emit(devices_markdown(), o.md);
    return 0;
  }
  const rl::Precision prec = rl::parse_precision(o.dtype);
  check_plot_path(o.plot);
  Inputs in;
  if (!o.results.empty()) in = load_inputs(o.results);
  const DeviceSpec& spec = resolve_device(o.device, in.records);

  rl::Measured cache;
  if (o.measured) {
    if (!device_info().present)
      throw UsageError(
          "--measured needs this machine's GPU (or pass result JSONs / a ceilings JSON)");
    cache = cached_ceilings_for(spec);
    if (cache.empty())
      throw UsageError("no cached ceilings for this GPU as " + spec.key +
                       ": run `klab ceilings` first");
  } else if (!o.results.empty()) {
    cache = cached_ceilings_for(spec);
  }
  const rl::Measured none;
  const rl::Measured measured =
      o.datasheet ? none : merge({&in.file_ceilings, &in.record_ceilings, &cache});

  std::string md = fmt::format("## Roofline: {}, {}\n\n{}\n\n", spec.name, rl::precision_name(prec),
                               device_header(spec));
  PlotSpec ps;

  // The roofs the model kernels meet: CUDA cores for the elementwise ones, the dtype's GEMM unit.
  md += "| roof | value | ridge (flop/B) | source |\n|---|---:|---:|---|\n";
  const rl::Roof mem_roof = rl::make_roof(spec, prec, rl::Unit::cuda_cores, measured);
  md += fmt::format("| memory | {} | | {} |\n", fmt_bw(mem_roof.bandwidth), mem_roof.memory_label);
  std::set<std::string> shown;
  for (const auto& k : rl::standard_kernels(prec)) {
    const rl::Roof r = rl::make_roof(spec, k.precision, k.unit, measured);
    if (!shown.insert(r.compute_label).second) continue;
    md += fmt::format("| compute, {} | {} TFLOP/s | {} | {} |\n",
                      rl::compute_roof_name(k.precision, k.unit), fmt_tflops(r.peak),
                      fmt_ai(r.ridge()), r.compute_label.substr(r.compute_label.find(", ") + 2));
    ps.add_roofs(spec, k.precision, k.unit, measured, "copy");
  }

  md +=
      "\n| kernel | shape | dtype | FLOPs | bytes | AI (flop/B) | roof | ridge (flop/B) | bound | "
      "attainable (TFLOP/s) "
      "| time floor |\n|---|---|---|---:|---:|---:|---|---:|---|---:|---:|\n";
  for (const auto& k : rl::standard_kernels(prec)) {
    const rl::Roof r = rl::make_roof(spec, k.precision, k.unit, measured);
    const double ai = k.ai();
    md += fmt::format("| {} | {} | {} | {} | {}B | {} | {} | {} | {} | {} | {} |\n", k.name,
                      k.shape, rl::precision_name(k.precision), rl::si(k.flops), rl::si(k.bytes),
                      fmt_ai(ai), rl::compute_roof_name(k.precision, k.unit), fmt_ai(r.ridge()),
                      rl::bound_name(rl::bound_of(r, ai)), fmt_tflops(rl::attainable(r, ai)),
                      fmt_time(rl::time_floor_s(r, k.flops, k.bytes)));
    if (o.results.empty())
      ps.points.push_back({{"label", k.name},
                           {"ai", ai},
                           {"tflops", rl::attainable(r, ai) / 1e12},
                           {"kind", "model"}});
  }
  md +=
      "\nAI = minimal FLOPs / minimal DRAM bytes (each input read once, each output written once); "
      "attainable = "
      "min(peak, AI × bandwidth); the time floor is max(FLOPs / peak, bytes / bandwidth). "
      "Elementwise kernels compute "
      "in fp32 on the CUDA cores whatever their storage type.\n";

  if (!o.results.empty()) {
    const auto chosen = select(in.records, o.all);
    md += fmt::format(
        "\n### Measured points ({} of {} records; {})\n\n", chosen.size(), in.records.size(),
        o.all ? "all timed GPU records" : "per problem: the baselines and the fastest rung");
    md +=
        "| variant | problem | dtype | mode | AI (flop/B) | achieved TFLOP/s | achieved GB/s | "
        "roof | attainable TFLOP/s | "
        "% of attainable | bound |\n|---|---|---|---|---:|---:|---:|---|---:|---:|---|\n";
    for (const Record* rec : chosen) {
      const auto& r = rec->r;
      rl::Roof roof;
      try {
        roof = roof_for(spec, *rec, measured, o.datasheet);
      } catch (const UsageError& e) {
        std::cerr << "klab: note: skipping " << r.variant << ": " << e.what() << "\n";
        continue;
      }
      const rl::Precision p = rl::precision_of(r.problem.dtype);
      const rl::Unit u = rl::unit_for(r.family, r.problem.dtype, r.ceiling.name);
      const rl::Assessment a =
          rl::assess(roof, r.counts.flops, r.counts.bytes, r.timing.stats.median * 1e-3);
      const bool moves_only = r.counts.flops <= 0;  // a transpose: only the memory roof applies
      md += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f}% | {} |\n", r.variant,
          r.problem.shape.str(), dtype_of(*rec), r.timing.mode, fmt_ai(a.ai),
          moves_only ? "—" : fmt_tflops(a.achieved_flops), fmt_bw(a.achieved_bytes),
          moves_only ? "— (data movement)" : rl::compute_roof_name(p, u),
          moves_only ? "—" : fmt_tflops(a.attainable), a.pct_of_roof, rl::bound_name(a.bound));
      ps.add_roofs(spec, p, u, measured_for(*rec, measured, o.datasheet), memory_ceiling_of(*rec));
      if (r.counts.flops > 0)  // a pure data mover (transpose) has AI 0: no place on log axes
        ps.points.push_back({{"label", short_variant(r.variant) + " " +
                                           bare_shape(r.problem.shape) + " " + dtype_of(*rec)},
                             {"ai", a.ai},
                             {"tflops", a.achieved_flops / 1e12},
                             {"pct", a.pct_of_roof},
                             {"kind", r.baseline_variant ? "baseline" : "measured"},
                             {"family", r.family}});
    }
    md += fmt::format(
        "\nFrom {}. Measured ceilings used: {}.\n", fmt::join(in.files, ", "),
        measured.empty() ? std::string("none (datasheet roofs)") : [&] {
          std::string s;
          for (const auto& [k, v] : measured)
            s += (s.empty() ? "" : ", ") + fmt::format("{} {:g}", k, v);
          return s;
        }());
  }
  emit(md, o.md);
  if (!o.plot.empty())
    plot(ps,
         fmt::format("Roofline: {} ({})", spec.name,
                     o.results.empty() ? std::string(rl::precision_name(prec)) : "measured"),
         o.plot);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// klab predict

struct PredictOpts {
  std::string device, md;
  std::vector<std::string> results;
  bool all = false, datasheet = false;
};

/// The ceiling that limits a record under the predicted bound, from its roof (the record's own
/// measured ceiling where it has one of that kind, else another measured one, else the datasheet).
struct Limit {
  std::string label;  ///< "copy 4150 GB/s, measured"
  double value = 0;   ///< bytes/s or flop/s
  bool memory = true;
};

Limit limit_for(rl::Bound b, const rl::Roof& roof) {
  auto kind = [](const std::string& label) { return label.substr(0, label.find(", ")); };
  auto source = [](const std::string& label) { return label.substr(label.find(", ") + 2); };
  if (b == rl::Bound::memory)
    return {fmt::format("{} {}, {}", kind(roof.memory_label), fmt_bw(roof.bandwidth),
                        source(roof.memory_label)),
            roof.bandwidth, true};
  return {fmt::format("{} {} TFLOP/s, {}", kind(roof.compute_label), fmt_tflops(roof.peak),
                      source(roof.compute_label)),
          roof.peak, false};
}

int cmd_predict(const PredictOpts& o) {
  const Inputs in = load_inputs(o.results);
  const DeviceSpec& spec = resolve_device(o.device, in.records);
  const rl::Measured cache = cached_ceilings_for(spec), none;
  const rl::Measured measured =
      o.datasheet ? none : merge({&in.file_ceilings, &in.record_ceilings, &cache});
  const auto chosen = select(in.records, o.all);
  if (chosen.empty())
    throw UsageError("no timed GPU records with FLOP and byte counts in the given inputs");

  std::string md = fmt::format("## Predictions against measurements: {}\n\n{}\n\n", spec.name,
                               device_header(spec));
  md +=
      "Predicted bound: the roofline's (AI against the ridge of the roof that kernel runs on). "
      "Floor: the least time "
      "the roofs allow, max(FLOPs / peak, bytes / bandwidth). % of ceiling: achieved throughput "
      "over the ceiling "
      "of the predicted bound (the record's measured ceiling where it is of that kind, else the "
      "measured or "
      "datasheet roof). Verdicts: at the roof from 90%.\n";

  std::map<std::string, std::vector<const Record*>> by_family;
  for (const Record* r : chosen) by_family[r->r.family].push_back(r);
  for (const auto& [fam, recs] : by_family) {
    md += fmt::format("\n### {}\n\n", fam);
    md +=
        "| problem | dtype | variant | AI (flop/B) | ridge (flop/B) | predicted | floor | median | "
        "achieved | "
        "% of ceiling | ceiling | verdict "
        "|\n|---|---|---|---:|---:|---|---:|---:|---:|---:|---|---|\n";
    for (const Record* rec : recs) {
      const auto& r = rec->r;
      rl::Roof roof;
      try {
        roof = roof_for(spec, *rec, measured, o.datasheet);
      } catch (const UsageError& e) {
        md +=
            fmt::format("| {} | {} | {} | | | | | | | | | not placed: {} |\n",
                        r.problem.shape.str(), dtype_of(*rec), short_variant(r.variant), e.what());
        continue;
      }
      const double secs = r.timing.stats.median * 1e-3;
      const rl::Assessment a = rl::assess(roof, r.counts.flops, r.counts.bytes, secs);
      const Limit lim = limit_for(a.bound, roof);
      const double achieved = lim.memory ? a.achieved_bytes : a.achieved_flops;
      const double pct = lim.value > 0 ? 100.0 * achieved / lim.value : 0.0;
      const std::string got = lim.memory ? fmt_bw(achieved) : fmt_tflops(achieved) + " TFLOP/s";
      md += fmt::format("| {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {:.1f}% | {} | {} |\n",
                        r.problem.shape.str(), dtype_of(*rec), short_variant(r.variant),
                        r.baseline_variant ? " (baseline)" : "", fmt_ai(a.ai), fmt_ai(a.ridge),
                        rl::bound_name(a.bound), fmt_time(a.floor_s), fmt_time(secs), got, pct,
                        lim.label,
                        rl::verdict(a.bound, pct, a.floor_s, a.ai, a.ridge) +
                            (r.timing.mode == "hot" ? " (hot L2)" : ""));
    }
  }
  md += fmt::format(
      "\nGenerated by `klab predict` from {} ({} of {} records: {}).\n", fmt::join(in.files, ", "),
      chosen.size(), in.records.size(),
      o.all ? "every timed GPU record" : "per problem, the baselines and the fastest rung");
  emit(md, o.md);
  return 0;
}

}  // namespace

void add_roofline_commands(CLI::App& app, CommandList& out) {
  static RooflineOpts ro;
  auto* roof =
      app.add_subcommand("roofline", "roofline of a device: model kernels, measured results, plot");
  roof->add_option("--device", ro.device,
                   "device from the table (h100-sxm, h100-pcie, h200, b200, a100-sxm, l4, "
                   "rtx4090); default: the results' device or this GPU");
  roof->add_option(
      "--dtype", ro.dtype,
      "dtype of the model kernels: f64, f32, tf32, bf16, f16, e4m3, fp4 (default bf16)");
  roof->add_option("--results", ro.results, "result JSON files or folders to place on the roofline")
      ->expected(1, -1);
  roof->add_option("--md", ro.md, "write the markdown here (default: stdout)")
      ->check(writable_path);
  roof->add_option("--plot", ro.plot, "plot file (.png, .svg or .pdf)")->check(plot_path);
  roof->add_flag("--measured", ro.measured,
                 "use this GPU's cached measured ceilings (klab ceilings)");
  roof->add_flag("--datasheet", ro.datasheet,
                 "datasheet roofs only, even where measured ceilings exist");
  roof->add_flag("--all", ro.all,
                 "every timed record, not only the baselines and the fastest rung per problem");
  roof->add_flag("--devices", ro.devices, "print the device table with its sources");
  out.emplace_back(roof, [] { return cmd_roofline(ro); });

  static PredictOpts po;
  auto* pred =
      app.add_subcommand("predict", "roofline predictions against measurements, from result JSONs");
  pred->add_option("inputs,--results", po.results,
                   "result JSON files or folders (ceilings JSONs among them are used)")
      ->required()
      ->expected(1, -1);
  pred->add_option("--device", po.device, "device from the table; default: the results' device");
  pred->add_option("--md", po.md, "write the markdown here (default: stdout)")
      ->check(writable_path);
  pred->add_flag("--all", po.all,
                 "every timed record, not only the baselines and the fastest rung per problem");
  pred->add_flag("--datasheet", po.datasheet, "datasheet roofs only");
  out.emplace_back(pred, [] { return cmd_predict(po); });
}

}  // namespace klab::cli

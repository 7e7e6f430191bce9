#include "klab/harness/result.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <map>
#include <ctime>

#include "klab/build_info.hpp"

namespace klab {

using nlohmann::json;

double geometric_mean(const std::vector<double>& v) {
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(v.size()));
}

std::string printed(double x, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return std::string(buf);
}

std::string tuned_dispatch_flag(const Result& r) {
  if (r.tuned.config.empty()) return "";
  if (!r.tuned.committed_table)
    return "no committed table where the rung looks for it: not the tuned dispatch";
  if (r.tuned.source == "cache") return "the tune cache's choice, not the committed table's";
  return "";
}

std::string build_sha(const Result& r) {
  return r.machine.contains("build") && r.machine["build"].contains("git_sha")
             ? r.machine["build"]["git_sha"].get<std::string>()
             : std::string();
}

bool is_rung_id(const std::string& id) {
  const size_t dot = id.find('.');
  return dot != std::string::npos && id.size() > dot + 4 && id[dot + 1] == 'v' &&
         id.find('[') == std::string::npos &&  // "v18_x[cfg5]": one of a tune's configurations
         std::isdigit(static_cast<unsigned char>(id[dot + 2])) &&
         std::isdigit(static_cast<unsigned char>(id[dot + 3])) && id[dot + 4] == '_';
}

namespace {

json check_json(const CheckResult& c) {
  json mism = json::array();
  for (const auto& m : c.first)
    mism.push_back({{"tensor", m.tensor}, {"index", m.index}, {"got", m.got}, {"want", m.want}});
  return {{"passed", c.passed},
          {"reference", c.reference.empty() ? std::string("fp64") : c.reference},
          {"compared", c.compared},
          {"elements", c.elements},
          {"max_abs", c.max_abs},
          {"max_rel", c.max_rel},
          {"rel_l2", c.rel_l2},
          {"nan", c.nan},
          {"unwritten", c.unwritten},
          {"bad", c.bad},
          {"first_mismatches", mism}};
}

CheckResult check_from_json(const json& c) {
  CheckResult r;
  r.passed = c.at("passed");
  r.reference = c.value("reference", std::string("fp64"));
  r.compared = c.value("compared", int64_t{0});
  r.elements = c.value("elements", int64_t{0});
  r.max_abs = c.value("max_abs", 0.0);
  r.max_rel = c.value("max_rel", 0.0);
  r.rel_l2 = c.value("rel_l2", 0.0);
  r.nan = c.value("nan", 0);
  r.unwritten = c.value("unwritten", 0);
  r.bad = c.value("bad", 0);
  for (const auto& m : c.value("first_mismatches", json::array()))
    r.first.push_back({m.at("tensor"), m.at("index"), m.at("got"), m.at("want")});
  return r;
}

json memory_json(const DeviceMemory& m) {
  json j = {{"tensors", m.tensors},
            {"workspace", m.workspace},
            {"needed", m.needed()},
            {"method", m.method}};
  if (m.peak_measured) j["peak_measured"] = *m.peak_measured;
  if (m.free >= 0) j["free"] = m.free;
  return j;
}

DeviceMemory memory_from_json(const json& j) {
  DeviceMemory m;
  m.tensors = j.value("tensors", int64_t{0});
  m.workspace = j.value("workspace", int64_t{0});
  m.free = j.value("free", int64_t{-1});
  m.method = j.value("method", std::string());
  if (j.contains("peak_measured") && j["peak_measured"].is_number())
    m.peak_measured = j["peak_measured"].get<int64_t>();
  return m;
}

}  // namespace

std::string now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json machine_json() {
  const DeviceInfo& d = device_info();
  json dev = {{"present", d.present}};
  if (d.present) {
    dev.update({{"name", d.name},
                {"sm_count", d.sm_count},
                {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                {"l2_bytes", d.l2_bytes},
                {"memory_bytes", d.global_mem_bytes},
                {"driver", d.driver},
                {"cuda_runtime", d.cuda_runtime},
                {"cuda_driver", d.cuda_driver},
                {"max_sm_clock_mhz", d.max_sm_clock_mhz},
                {"pci_bus_id", d.pci_bus_id}});
  } else {
    dev["absent_reason"] = d.absent_reason;
  }
  return {{"device", dev},
          {"build",
           {{"git_sha", build::kGitSha},
            {"type", build::kBuildType},
            {"cxx_flags", build::kCxxFlags},
            {"cuda_flags", build::kCudaFlags},
            {"cuda_archs", build::kCudaArchs}}}};
}

json to_json(const Result& r) {
  json j = {{"variant", r.variant},
            {"family", r.family},
            {"problem", r.problem.shape.str()},
            {"dtype", std::string(dtype_name(r.problem.dtype))},
            {"misalign", r.problem.misalign},
            {"device_kind", r.device_kind},
            {"baseline_variant", r.baseline_variant},
            {"status", r.status},
            {"timestamp", r.timestamp},
            {"flops", r.counts.flops},
            {"bytes", r.counts.bytes}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.problem.layout.empty()) j["layout"] = r.problem.layout;
  if (r.block_threads) j["block_threads"] = r.block_threads;
  if (!r.tuned.config.empty())
    j["tuned"] = {{"config", r.tuned.config},
                  {"source", r.tuned.source},
                  {"path", r.tuned.path},
                  {"committed_table", r.tuned.committed_table}};
  if (r.seed) j["seed"] = r.seed;
  if (!r.host_seconds.empty()) {
    json h = json::object();
    for (const auto& [phase, s] : r.host_seconds.phases) h[phase] = s;
    j["host_seconds"] = h;
  }
  if (r.device_memory) j["device_memory"] = memory_json(*r.device_memory);
  if (r.checked) {
    j["check"] = check_json(r.check);
    if (r.vendor_checked) j["check"]["second_opinion"] = check_json(r.vendor_check);
  }
  if (r.timed) {
    const auto& s = r.timing.stats;
    j.update({{"mode", r.timing.mode},
              {"method", r.timing.method},
              {"launches_per_sample", r.timing.launches_per_sample},
              {"discarded_samples", r.timing.discarded_samples},
              {"samples_ms", r.timing.samples_ms},
              {"median_ms", s.median},
              {"p10_ms", s.p10},
              {"p90_ms", s.p90},
              {"mean_ms", s.mean},
              {"rel_noise", s.rel_noise},
              {"converged", r.timing.converged},
              {"rotation_sets", r.timing.rotation_sets},
              {"sm_clock_mhz", {r.timing.sm_clock_min_mhz, r.timing.sm_clock_max_mhz}},
              {"throttled_samples", r.timing.throttled_samples},
              {"throttled", r.timing.throttled_samples > 0},
              {"tflops", r.tflops},
              {"gbps", r.gbps}});
    if (!r.ceiling.name.empty())
      j["ceiling"] = {{"name", r.ceiling.name},
                      {"unit", r.ceiling.unit},
                      {"value", r.ceiling.value},
                      {"datasheet", r.ceiling.datasheet},
                      {"pct", r.ceiling.pct}};
    if (!r.baseline.id.empty())
      j["baseline"] = {{"id", r.baseline.id}, {"speedup", r.baseline.speedup}};
    if (r.paired.pairs > 0)
      j["paired"] = {{"with", r.paired_with},
                     {"pairs", r.paired.pairs},
                     {"median", r.paired.median},
                     {"p10", r.paired.p10},
                     {"p90", r.paired.p90}};
    if (r.paired.pairs > 0 && r.paired.ci_hi > 0)
      j["paired"]["ci95"] = {r.paired.ci_lo, r.paired.ci_hi};
  }
  j.update(r.machine.is_object() && !r.machine.empty() ? r.machine : machine_json());
  return j;
}

Result result_from_json(const json& j) {
  Result r;
  r.variant = j.at("variant");
  r.family = j.at("family");
  r.problem.family = r.family;
  r.problem.shape = parse_shape(j.at("problem").get<std::string>());
  r.problem.dtype = parse_dtype(j.at("dtype").get<std::string>());
  r.problem.misalign = j.value("misalign", 0);
  r.problem.layout = j.value("layout", std::string());
  r.device_kind = j.value("device_kind", "gpu");
  r.baseline_variant = j.value("baseline_variant", false);
  r.status = j.value("status", "ok");
  r.reason = j.value("reason", "");
  r.timestamp = j.value("timestamp", "");
  r.counts.flops = j.value("flops", 0.0);
  r.counts.bytes = j.value("bytes", 0.0);
  r.block_threads = j.value("block_threads", 0);
  if (j.contains("tuned")) {
    const json& t = j["tuned"];
    r.tuned.config = t.value("config", std::string());
    r.tuned.source = t.value("source", std::string());
    r.tuned.path = t.value("path", std::string());
    r.tuned.committed_table = t.value("committed_table", false);
  }
  r.seed = j.value("seed", uint64_t{0});
  for (const char* key : {"device", "build"})
    if (j.contains(key)) r.machine[key] = j[key];
  if (j.contains("host_seconds"))
    for (const auto& [phase, s] : j["host_seconds"].items())
      r.host_seconds.add(phase, s.get<double>());
  if (j.contains("device_memory")) r.device_memory = memory_from_json(j["device_memory"]);
  if (j.contains("check")) {
    r.checked = true;
    r.check = check_from_json(j["check"]);
    if (j["check"].contains("second_opinion")) {
      r.vendor_checked = true;
      r.vendor_check = check_from_json(j["check"]["second_opinion"]);
    }
  }
  if (j.contains("median_ms")) {
    r.timed = true;
    r.timing.mode = j.value("mode", "cold");
    r.timing.samples_ms = j.value("samples_ms", std::vector<double>{});
    r.timing.stats = summarize(r.timing.samples_ms);
    r.timing.converged = j.value("converged", false);
    r.timing.rotation_sets = j.value("rotation_sets", 1);
    r.timing.method = j.value("method", std::string());
    r.timing.launches_per_sample = j.value("launches_per_sample", 1);
    r.timing.discarded_samples = j.value("discarded_samples", 0);
    auto clk = j.value("sm_clock_mhz", std::vector<int>{0, 0});
    r.timing.sm_clock_min_mhz = clk.at(0);
    r.timing.sm_clock_max_mhz = clk.at(1);
    r.timing.throttled_samples = j.value("throttled_samples", 0);
    r.tflops = j.value("tflops", 0.0);
    r.gbps = j.value("gbps", 0.0);
    if (j.contains("ceiling")) {
      const auto& c = j["ceiling"];
      r.ceiling.name = c.at("name");
      r.ceiling.unit = c.value("unit", "");
      r.ceiling.value = c.value("value", 0.0);
      r.ceiling.datasheet = c.value("datasheet", 0.0);
      r.ceiling.pct = c.value("pct", 0.0);
    }
    if (j.contains("baseline")) {
      r.baseline.id = j["baseline"].at("id");
      r.baseline.speedup = j["baseline"].value("speedup", 0.0);
    }
    if (j.contains("paired")) {
      const auto& q = j["paired"];
      r.paired_with = q.value("with", std::string());
      r.paired.pairs = q.value("pairs", 0);
      r.paired.median = q.value("median", 0.0);
      r.paired.p10 = q.value("p10", 0.0);
      r.paired.p90 = q.value("p90", 0.0);
      if (q.contains("ci95") && q["ci95"].is_array() && q["ci95"].size() == 2) {
        r.paired.ci_lo = q["ci95"][0].get<double>();
        r.paired.ci_hi = q["ci95"][1].get<double>();
      }
    }
  }
  return r;
}

std::string speedup_summary(const std::vector<Result>& results) {
  std::map<std::string, std::vector<double>> per_variant;
  std::map<std::string, double> best_per_problem;  // problem text + mode -> fastest speed-up
  for (const auto& r : results) {
    if (!r.timed || r.baseline_variant || r.baseline.speedup <= 0) continue;
    per_variant[r.variant].push_back(r.baseline.speedup);
    double& best = best_per_problem[r.problem.str() + " " + r.timing.mode];
    best = std::max(best, r.baseline.speedup);
  }
  if (best_per_problem.size() < 2) return "";
  std::string md =
      "\n| variant | problems | x baseline: geometric mean | min | max "
      "|\n|---|---:|---:|---:|---:|\n";
  auto row = [&](const std::string& name, const std::vector<double>& v) {
    md += "| " + name + " | " + std::to_string(v.size()) + " | " +
          printed(geometric_mean(v), "%.3fx") + " | " +
          printed(*std::min_element(v.begin(), v.end()), "%.2fx") + " | " +
          printed(*std::max_element(v.begin(), v.end()), "%.2fx") + " |\n";
  };
  for (const auto& [variant, v] : per_variant)
    if (v.size() >= 2) row(variant, v);
  std::vector<double> best;
  for (const auto& [problem, x] : best_per_problem) best.push_back(x);
  row("the fastest variant of each problem", best);
  return md;
}

std::string fast_state_summary(const std::vector<Result>& results) {
  auto at = [](const std::string& variant, const Result& r) {
    return variant + " " + r.problem.str() + " " + r.timing.mode;
  };
  std::map<std::string, const Result*> baselines;
  for (const auto& r : results)
    if (r.timed && r.baseline_variant) baselines[at(r.variant, r)] = &r;
  std::string rows;
  std::map<std::string, std::vector<double>> per_variant;
  for (const auto& r : results) {
    if (!r.timed || r.baseline_variant || r.baseline.id.empty() || !(r.timing.stats.p10 > 0))
      continue;
    const auto it = baselines.find(at(r.baseline.id, r));
    if (it == baselines.end() || !(it->second->timing.stats.p10 > 0)) continue;
    const SampleStats &s = r.timing.stats, &b = it->second->timing.stats;
    const double x = b.p10 / s.p10;
    per_variant[r.variant].push_back(x);
    rows += "| " + r.variant + " | " + r.problem.str() + " | " +
            printed(r.baseline.speedup, "%.2fx") + " | " + printed(x, "%.2fx") + " | " +
            printed(s.p90 / s.p10, "%.3f") + " | " + printed(b.p90 / b.p10, "%.3f") + " |\n";
  }
  if (rows.empty()) return "";
  std::string md =
      "\n| variant | problem | x baseline (medians) | x baseline (p10s) | p90 / p10 | baseline's "
      "p90 / p10 |\n|---|---|---:|---:|---:|---:|\n" +
      rows;
  for (const auto& [variant, v] : per_variant) {
    if (v.size() < 2) continue;
    md += "| " + variant + " | geometric mean, " + std::to_string(v.size()) + " problems | | " +
          printed(geometric_mean(v), "%.3fx") + " | | |\n";
  }
  return md;
}

bool rotated_pair_order(const Timing& t) {
  return t.method.find("the order rotated each round") != std::string::npos &&
         t.method.find("with 1 other variant(s)") != std::string::npos;
}

std::string paired_summary(const std::vector<Result>& results) {
  std::string rows;
  std::map<std::string, std::vector<double>> per_variant;
  bool any_ci = false, any_rotated_pair = false;
  for (const auto& r : results) {
    if (!r.timed || r.paired.pairs <= 0) continue;
    per_variant[r.variant].push_back(r.paired.median);
    any_rotated_pair = any_rotated_pair || rotated_pair_order(r.timing);
    // Records since the interval was recorded: the median's 95% confidence interval beside it.
    const bool ci = r.paired.ci_hi > 0;
    any_ci = any_ci || ci;
    rows +=
        "| " + r.variant + " | " + r.problem.str() + " | " + r.paired_with + " | " +
        (r.baseline.speedup > 0 ? printed(r.baseline.speedup, "%.3fx") : "-") + " | " +
        printed(r.paired.median, "%.3fx") +
        (ci ? " [" + printed(r.paired.ci_lo, "%.3f") + "-" + printed(r.paired.ci_hi, "%.3f") + "]"
            : "") +
        " | " + printed(r.paired.p10, "%.3fx") + " - " + printed(r.paired.p90, "%.3fx") + " | " +
        std::to_string(r.paired.pairs) + " |\n";
  }
  if (rows.empty()) return "";
  std::string md =
      "\n| variant | problem | paired with | x baseline (medians) | x baseline (paired: median "
      "of the rounds' ratios) | the ratios' p10 - p90 | pairs "
      "|\n|---|---|---|---:|---:|---:|---:|\n" +
      rows;
  for (const auto& [variant, v] : per_variant) {
    if (v.size() < 2) continue;
    md += "| " + variant + " | geometric mean, " + std::to_string(v.size()) + " problems | | | " +
          printed(geometric_mean(v), "%.3fx") + " | | |\n";
  }
  if (any_ci)
    md +=
        "\nIn brackets: the paired median's 95% confidence interval (order statistics of the "
        "rounds' ratios).\n";
  if (any_rotated_pair)
    md +=
        "\nTwo variants in an order rotated each round (klab before e98e963): each such ratio "
        "can be off by about " +
        printed(kRotatedPhaseUs, "%.2f") +
        " us of its launch either way, fixed for its process (the timing path's phase of four "
        "samples, docs/design.md).\n";
  return md;
}

std::string clock_range(const Timing& t) {
  return t.sm_clock_max_mhz
             ? std::to_string(t.sm_clock_min_mhz) + "-" + std::to_string(t.sm_clock_max_mhz)
             : std::string("-");
}

bool clocks_apart(const Timing& a, const Timing& b) {
  return a.sm_clock_max_mhz && b.sm_clock_max_mhz &&
         (a.sm_clock_max_mhz < b.sm_clock_min_mhz || b.sm_clock_max_mhz < a.sm_clock_min_mhz);
}

std::string against_summary(const std::vector<Result>& results, const std::string& against) {
  auto key = [](const Result& r) { return r.problem.str() + " " + r.timing.mode; };
  std::map<std::string, const Result*> other, best;
  for (const auto& r : results) {
    if (!r.timed || !(r.timing.stats.median > 0)) continue;
    if (r.variant == against) other[key(r)] = &r;
    if (!is_rung_id(r.variant) || r.variant == against || (r.checked && !r.check.passed)) continue;
    const Result*& b = best[key(r)];
    if (!b || r.timing.stats.median < b->timing.stats.median) b = &r;
  }
  std::string rows;
  bool apart = false;
  std::map<DType, std::vector<double>> medians, p10s;
  for (const auto& [k, o] : other) {
    const auto it = best.find(k);
    if (it == best.end()) continue;
    const SampleStats &s = it->second->timing.stats, &b = o->timing.stats;
    const double x = b.median / s.median, x10 = s.p10 > 0 && b.p10 > 0 ? b.p10 / s.p10 : 0;
    medians[o->problem.dtype].push_back(x);
    if (x10 > 0) p10s[o->problem.dtype].push_back(x10);
    // The two sides' SM clock ranges: they are not paired (another library, timed apart), so a
    // gap between them is part of the ratio; "apart" where the ranges do not overlap.
    const Timing &tr = it->second->timing, &to = o->timing;
    const bool disjoint = clocks_apart(tr, to);
    apart |= disjoint;
    rows += "| " + o->problem.str() + " | " + it->second->variant + " | " +
            printed(s.median, "%.4f") + " | " + printed(b.median, "%.4f") + " | " +
            printed(x, "%.2fx") + " | " + (x10 > 0 ? printed(x10, "%.2fx") : "-") + " | " +
            clock_range(tr) + " / " + clock_range(to) + (disjoint ? " (apart)" : "") + " |\n";
  }
  if (rows.empty()) return "";
  std::string md = "\n| problem | fastest rung | median ms | " + against +
                   " median ms | speed-up (medians) | speed-up (p10s) | SM MHz (rung / " + against +
                   ") |\n|---|---|---:|---:|---:|---:|---|\n" + rows;
  for (const auto& [t, v] : medians)
    md += "| geometric mean, " + std::string(dtype_name(t)) + ", " + std::to_string(v.size()) +
          " problems | | | | " + printed(geometric_mean(v), "%.3fx") + " | " +
          (p10s[t].empty() ? "-" : printed(geometric_mean(p10s[t]), "%.3fx")) + " | |\n";
  if (apart)
    md +=
        "\nThe two sides are timed apart, not paired: where their clock ranges do not overlap "
        "(apart), the ratio holds the clocks' difference as well as the kernels'.\n";
  return md;
}

std::string dtype_summary(const std::vector<Result>& results) {
  struct Best {
    double ms = INFINITY;
    std::string variant;
  };
  // The problem without its dtype (shape, layout, timing mode) -> dtype -> its fastest rung.
  std::map<std::string, std::map<DType, Best>> by_shape;
  for (const auto& r : results) {
    if (!r.timed || r.baseline_variant || !(r.timing.stats.median > 0)) continue;
    const std::string key = r.problem.shape.str() +
                            (r.problem.layout.empty() ? "" : " " + r.problem.layout) +
                            (r.timing.mode == "cold" ? "" : " " + r.timing.mode);
    Best& b = by_shape[key][r.problem.dtype];
    if (r.timing.stats.median < b.ms) b = {r.timing.stats.median, r.variant};
  }
  std::string md;
  std::map<std::pair<DType, DType>, std::vector<double>> ratios;
  for (const auto& [shape, per_dtype] : by_shape) {
    if (per_dtype.size() < 2) continue;
    // The reference: the widest dtype (the first of equal width).
    DType ref = per_dtype.begin()->first;
    for (const auto& [t, b] : per_dtype)
      if (dtype_size(t) > dtype_size(ref)) ref = t;
    const Best& rb = per_dtype.at(ref);
    for (const auto& [t, b] : per_dtype) {
      if (t == ref) continue;
      const double x = rb.ms / b.ms;
      ratios[{t, ref}].push_back(x);
      char nums[3][32];
      std::snprintf(nums[0], sizeof nums[0], "%.4f", rb.ms);
      std::snprintf(nums[1], sizeof nums[1], "%.4f", b.ms);
      std::snprintf(nums[2], sizeof nums[2], "%.2fx", x);
      md += "| " + shape + " | " + std::string(dtype_name(ref)) + ": " + rb.variant + " | " +
            nums[0] + " | " + std::string(dtype_name(t)) + ": " + b.variant + " | " + nums[1] +
            " | " + nums[2] + " |\n";
    }
  }
  if (md.empty()) return "";
  md =
      "\nThe same shape in two dtypes (the fastest rung of each, baselines left out; speed-up: the "
      "reference's median time over the other's):\n\n| shape | reference: rung | median ms | "
      "other dtype: rung | median ms | speed-up |\n|---|---|---:|---|---:|---:|\n" +
      md;
  for (const auto& [pair, v] : ratios) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu shapes | | | | | %.3fx (min %.2fx, max %.2fx) |\n",
                  v.size(), geometric_mean(v), *std::min_element(v.begin(), v.end()),
                  *std::max_element(v.begin(), v.end()));
    md += "| geometric mean, " + std::string(dtype_name(pair.first)) + " over " +
          std::string(dtype_name(pair.second)) + ", " + buf;
  }
  return md;
}

}  // namespace klab

#include "klab/harness/goals.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "klab/core/errors.hpp"
#include "klab/harness/bench.hpp"

namespace klab {

using nlohmann::json;

namespace {

GoalMetric parse_metric(const std::string& name, const std::string& where) {
  static const std::map<std::string, GoalMetric> kNames = {
      {"x_baseline", GoalMetric::x_baseline}, {"x_variant", GoalMetric::x_variant},
      {"x_dtype", GoalMetric::x_dtype},       {"pct_ceiling", GoalMetric::pct_ceiling},
      {"tflops", GoalMetric::tflops},         {"median_us", GoalMetric::median_us}};
  const auto it = kNames.find(name);
  if (it == kNames.end())
    throw UsageError(where + ": unknown metric '" + name +
                     "' (x_baseline, x_variant, x_dtype, pct_ceiling, tflops, median_us)");
  return it->second;
}

Goal parse_goal(const json& g, size_t index) {
  std::string where = "goal #" + std::to_string(index + 1);
  if (!g.is_object()) throw UsageError(where + ": not an object");
  static const std::set<std::string> kKeys = {
      "id",        "issue",   "text",     "family",   "dtype",
      "metric",    "against", "ceiling",  "at_least", "at_most",
      "aggregate", "rungs",   "problems", "bytes_of", "tie_within_noise"};
  for (const auto& [key, value] : g.items())
    if (!kKeys.count(key)) throw UsageError(where + ": unknown key '" + key + "'");
  auto text = [&](const char* key) {
    if (!g.contains(key) || !g[key].is_string() || g[key].get<std::string>().empty())
      throw UsageError(where + ": '" + key + "' (a non-empty string) is missing");
    return g[key].get<std::string>();
  };
  Goal out;
  out.id = text("id");
  where = "goal " + out.id;
  if (!g.contains("issue") || !g["issue"].is_number_integer())
    throw UsageError(where + ": 'issue' (an integer) is missing");
  out.issue = g["issue"].get<int>();
  out.text = text("text");
  out.family = text("family");
  auto named = [&](auto&& parse) {  // a dtype's or shape's own error, naming the goal
    try {
      return parse();
    } catch (const UsageError& e) {
      throw UsageError(where + ": " + e.what());
    }
  };
  out.dtype = named([&] { return parse_dtype(text("dtype")); });
  out.metric = parse_metric(text("metric"), where);
  const bool needs_against = out.metric == GoalMetric::x_baseline ||
                             out.metric == GoalMetric::x_variant ||
                             out.metric == GoalMetric::x_dtype;
  if (needs_against) out.against = text("against");
  if (out.metric == GoalMetric::x_dtype &&
      named([&] { return parse_dtype(out.against); }) == out.dtype)
    throw UsageError(where + ": x_dtype against its own dtype");
  if (!needs_against && g.contains("against"))
    throw UsageError(where + ": 'against' is x_baseline's, x_variant's and x_dtype's only");
  if (out.metric == GoalMetric::pct_ceiling) out.ceiling = text("ceiling");
  if (out.metric != GoalMetric::pct_ceiling && g.contains("ceiling"))
    throw UsageError(where + ": 'ceiling' is pct_ceiling's only");
  if (g.contains("bytes_of")) {
    if (out.metric != GoalMetric::pct_ceiling || !g["bytes_of"].is_array() || g["bytes_of"].empty())
      throw UsageError(where + ": 'bytes_of' (a list of dimensions) is pct_ceiling's only");
    for (const auto& d : g["bytes_of"]) {
      if (!d.is_string()) throw UsageError(where + ": 'bytes_of' holds dimension names");
      out.bytes_of.push_back(d.get<std::string>());
    }
  }
  const bool least = g.contains("at_least"), most = g.contains("at_most");
  if (least == most) throw UsageError(where + ": exactly one of 'at_least' and 'at_most'");
  const json& bound = least ? g["at_least"] : g["at_most"];
  if (!bound.is_number() || !(bound.get<double>() > 0))
    throw UsageError(where + ": the bound must be a positive number");
  out.bound = bound.get<double>();
  out.at_most = most;
  if ((out.metric == GoalMetric::median_us) != out.at_most)
    throw UsageError(where + (out.at_most ? ": only median_us is bounded from above"
                                          : ": median_us is bounded from above (at_most)"));
  if (g.contains("aggregate")) {
    const std::string a = g["aggregate"].is_string() ? g["aggregate"].get<std::string>() : "";
    if (a != "each" && a != "geomean")
      throw UsageError(where + ": 'aggregate' is \"each\" or \"geomean\"");
    out.geomean = a == "geomean";
  }
  if (g.contains("rungs")) {
    if (!g["rungs"].is_array()) throw UsageError(where + ": 'rungs' is a list of variant ids");
    for (const auto& r : g["rungs"]) {
      if (!r.is_string() || !is_rung_id(r.get<std::string>()))
        throw UsageError(where + ": 'rungs' holds " + r.dump() + ", not a rung id");
      out.rungs.push_back(r.get<std::string>());
    }
  }
  if (!g.contains("problems") || !g["problems"].is_array() || g["problems"].empty())
    throw UsageError(where + ": 'problems' (a non-empty list of shapes) is missing");
  for (const auto& p : g["problems"]) {
    if (!p.is_string()) throw UsageError(where + ": a problem is a shape string");
    out.problems.push_back(named([&] { return parse_shape(p.get<std::string>()); }));
  }
  for (const Shape& p : out.problems)
    for (const std::string& d : out.bytes_of)
      if (!p.has(d)) throw UsageError(where + ": 'bytes_of' names " + d + ", not in " + p.str());
  if (g.contains("tie_within_noise")) {
    if (out.metric != GoalMetric::x_baseline || out.at_most || out.geomean ||
        !g["tie_within_noise"].is_array() || g["tie_within_noise"].empty())
      throw UsageError(where +
                       ": 'tie_within_noise' (a list of its problems) is x_baseline's, "
                       "at_least, each problem judged alone");
    for (const auto& p : g["tie_within_noise"]) {
      if (!p.is_string()) throw UsageError(where + ": 'tie_within_noise' holds shape strings");
      const Shape s = named([&] { return parse_shape(p.get<std::string>()); });
      if (std::find(out.problems.begin(), out.problems.end(), s) == out.problems.end())
        throw UsageError(where + ": 'tie_within_noise' names " + s.str() + ", not a problem of it");
      out.ties.push_back(s);
    }
  }
  if (out.geomean && out.problems.size() < 2)
    throw UsageError(where + ": a geometric mean needs two or more problems");
  return out;
}

/// The records a goal may use at one problem: timed, cold, the rung's own block size, not
/// failing its check, a tuned rung's committed dispatch, of the goal's family and dtype.
bool usable(const Result& r, const Goal& g, const Shape& shape, DType dtype) {
  return r.timed && r.status == "ok" && r.timing.mode == "cold" && r.block_threads == 0 &&
         tuned_dispatch_flag(r).empty() && !(r.checked && !r.check.passed) &&
         r.timing.stats.median > 0 && r.family == g.family && r.problem.dtype == dtype &&
         r.problem.shape == shape;
}

bool is_candidate(const Result& r, const Goal& g) {
  return is_rung_id(r.variant) &&
         (g.rungs.empty() || std::find(g.rungs.begin(), g.rungs.end(), r.variant) != g.rungs.end());
}

bool higher_is_better(GoalMetric m) { return m != GoalMetric::median_us; }

/// Whether an x_baseline value of r is its paired median (an interleaved benchmark with the
/// goal's baseline), not the medians' ratio.
bool paired_against(const Result& r, const Goal& g) {
  return r.paired.pairs > 0 && r.paired_with == g.against && r.paired.median > 0;
}

/// The relative error an x_baseline value of r can carry from its benchmark's order: two variants
/// interleaved with the order rotated each round (kRotatedPhaseUs of r's launch), else 0.
double rotated_order_bias(const Result& r) {
  if (!rotated_pair_order(r.timing) || !(r.timing.stats.median > 0)) return 0;
  return kRotatedPhaseUs * 1e-3 / r.timing.stats.median;
}

/// A rung's value on its own record (x_baseline, pct_ceiling, tflops, median_us); false where the
/// record does not carry it.
bool own_value(const Result& r, const Goal& g, const std::map<std::string, double>& ceilings,
               double& value, std::string& how) {
  switch (g.metric) {
    case GoalMetric::x_baseline:
      if (paired_against(r, g)) {
        value = r.paired.median;
        how = "paired, " + std::to_string(r.paired.pairs) + " rounds";
        return true;
      }
      if (r.baseline.id == g.against && r.baseline.speedup > 0) {
        value = r.baseline.speedup;
        how = "medians";
        return true;
      }
      return false;
    case GoalMetric::pct_ceiling: {
      double ceiling = 0;
      std::string source;
      if (r.ceiling.name == g.ceiling && r.ceiling.value > 0) {
        ceiling = r.ceiling.value;
        source = "this run's";
      } else if (const auto it = ceilings.find(g.ceiling); it != ceilings.end()) {
        ceiling = it->second;
        source = "the highest measured";
      }
      double gbps = r.gbps, elements = 1;
      for (const std::string& d : g.bytes_of) elements *= double(r.problem.shape.get_or(d, 0));
      if (!g.bytes_of.empty())  // bytes / (ms * 1e-3 s) / 1e9
        gbps = elements * double(dtype_size(r.problem.dtype)) / (r.timing.stats.median * 1e6);
      if (!(ceiling > 0) || !(gbps > 0)) return false;
      value = 100.0 * gbps / ceiling;
      how = "of " + g.ceiling + " (" + source + ", " + printed(ceiling, "%.0f") + " GB/s)";
      if (!g.bytes_of.empty()) {
        how += ", bytes of ";
        for (size_t i = 0; i < g.bytes_of.size(); ++i) how += (i ? " x " : "") + g.bytes_of[i];
      }
      return true;
    }
    case GoalMetric::tflops:
      if (!(r.tflops > 0)) return false;
      value = r.tflops;
      how = "median";
      return true;
    case GoalMetric::median_us:
      value = r.timing.stats.median * 1e3;
      how = "median";
      return true;
    default:
      return false;
  }
}

/// The other side of x_variant (the library's newest record) or x_dtype (the fastest rung at the
/// other dtype) in one run folder; x_variant and x_dtype values need it.
bool other_side(const Result& r, const Goal& g, const Shape& shape) {
  if (g.metric == GoalMetric::x_variant)
    return usable(r, g, shape, g.dtype) && r.variant == g.against;
  if (g.metric == GoalMetric::x_dtype)
    return usable(r, g, shape, parse_dtype(g.against)) && is_rung_id(r.variant);
  return false;
}

/// The 95% confidence interval of rung record r's paired median: the record's own, else from its
/// samples and those of a record of its baseline in the same run that reproduces the paired
/// median (an interleaved benchmark that dropped no round keeps both variants' samples aligned
/// by round: the same median from them is the check that the two records are one benchmark's);
/// false where none does or the pairs are too few.
bool paired_ci(const Result& r, const std::vector<const Result*>& baselines, double& lo,
               double& hi) {
  if (r.paired.ci_hi > 0) {  // the record's own (benchmarks since the interval was recorded)
    lo = r.paired.ci_lo;
    hi = r.paired.ci_hi;
    return true;
  }
  const std::vector<double>& mine = r.timing.samples_ms;
  if (r.paired.pairs <= 0 || int64_t(mine.size()) != r.paired.pairs) return false;
  for (const Result* b : baselines) {
    if (b->timing.samples_ms.size() != mine.size()) continue;
    const PairedRatio p = paired_ratio(b->timing.samples_ms, mine);
    if (p.pairs == r.paired.pairs && std::abs(p.median - r.paired.median) <= 1e-12 * p.median &&
        p.ci_hi > 0) {
      lo = p.ci_lo;
      hi = p.ci_hi;
      return true;
    }
  }
  return false;
}

/// An x_baseline value from several processes: where a run folder holds two or more records of
/// rung record r's variant, build and problem paired with the goal's baseline (the same
/// interleaved benchmark run again in separate processes, whose paired ratio can sit in one of
/// two modes a few percent apart: docs/design.md), the median of their paired medians, with
/// their lowest and highest as the interval; false where r's is the only one.
bool processes_value(const Result& r, const std::vector<const Result*>& same_rung, const Goal& g,
                     double& value, double& lo, double& hi, std::string& how) {
  if (!paired_against(r, g)) return false;
  std::vector<double> v;
  for (const Result* p : same_rung)
    if (paired_against(*p, g) && build_sha(*p) == build_sha(r)) v.push_back(p->paired.median);
  if (v.size() < 2) return false;
  value = percentile(v, 0.5);
  lo = *std::min_element(v.begin(), v.end());
  hi = *std::max_element(v.begin(), v.end());
  how = "paired, median of " + std::to_string(v.size()) + " processes (" + printed(lo, "%.3f") +
        "-" + printed(hi, "%.3f") + "x)";
  return true;
}

/// Each problem is judged on one run folder: the newest holding a rung's value for it (both
/// sides, for x_variant and x_dtype). Within it, each rung's newest record, and the best rung;
/// an x_baseline rung benched in several processes of one build there, by their median
/// (processes_value).
GoalRow judge(const Goal& g, const Shape& shape, const std::vector<SourcedResult>& records,
              const std::map<std::string, double>& ceilings) {
  struct Run {
    std::map<std::string, const Result*> mine;              // each rung's newest record
    std::map<std::string, std::vector<const Result*>> all;  // each rung's records
    std::map<std::string, const Result*> others;  // the other side's, each variant's newest
    const Result* other = nullptr;         // x_variant: the library's; x_dtype: the fastest rung's
    std::vector<const Result*> baselines;  // x_baseline: the baseline's records (paired_ci)
  };
  std::map<std::string, Run> runs;
  auto keep_newest = [](const Result*& n, const Result& r) {
    if (!n || r.timestamp > n->timestamp) n = &r;
  };
  for (const auto& s : records) {
    const Result& r = s.r;
    if (usable(r, g, shape, g.dtype) && is_candidate(r, g)) {
      keep_newest(runs[s.run].mine[r.variant], r);
      runs[s.run].all[r.variant].push_back(&r);
    } else if (other_side(r, g, shape))
      keep_newest(runs[s.run].others[r.variant], r);
    else if (g.metric == GoalMetric::x_baseline && r.variant == g.against &&
             usable(r, g, shape, g.dtype))
      runs[s.run].baselines.push_back(&r);
  }
  for (auto& [name, run] : runs)
    for (const auto& [variant, r] : run.others)
      if (!run.other || r->timing.stats.median < run.other->timing.stats.median) run.other = r;
  GoalRow row;
  row.problem = shape.str();
  std::string newest;  // the chosen run's newest record
  for (const auto& [name, run] : runs) {
    GoalRow best;
    const Result* best_record = nullptr;
    std::string stamp;
    double best_lo = 0, best_hi = 0;  // the processes' range, where the best value is their median
    for (const auto& [variant, r] : run.mine) {
      double v = 0, lo = 0, hi = 0;
      std::string how;
      if (g.metric == GoalMetric::x_variant || g.metric == GoalMetric::x_dtype) {
        if (!run.other) continue;
        v = run.other->timing.stats.median / r->timing.stats.median;
        how = g.metric == GoalMetric::x_dtype
                  ? "against " + run.other->variant + " (" + g.against + ")"
                  : "medians";
        if (clocks_apart(r->timing, run.other->timing))  // timed apart at clocks that differ
          how += ", clocks apart (" + clock_range(r->timing) + " / " +
                 clock_range(run.other->timing) + " MHz)";
      } else if (!own_value(*r, g, ceilings, v, how)) {
        continue;
      } else if (g.metric == GoalMetric::x_baseline) {
        processes_value(*r, run.all.at(variant), g, v, lo, hi, how);
      }
      stamp = std::max(stamp, r->timestamp);
      const bool better = higher_is_better(g.metric) ? v > best.value : v < best.value;
      if (!best.measured || better) {
        best = {shape.str(), true, v, false, variant, name, how};
        if (g.metric == GoalMetric::x_baseline) best.bias = rotated_order_bias(*r);
        best_record = r;
        best_lo = lo;
        best_hi = hi;
      }
    }
    if (best_hi > 0) {  // several processes: their range
      best.ci_lo = best_lo;
      best.ci_hi = best_hi;
      best.processes = true;
    } else if (best_record && g.metric == GoalMetric::x_baseline &&
               paired_against(*best_record, g)) {
      paired_ci(*best_record, run.baselines, best.ci_lo, best.ci_hi);
    }
    if (best.measured && (!row.measured || stamp > newest)) {
      newest = stamp;
      row = best;
    }
  }
  return row;
}

bool holds(const Goal& g, double v) { return g.at_most ? v <= g.bound : v >= g.bound; }

}  // namespace

std::vector<Goal> parse_goals(const json& j) {
  if (!j.is_object() || !j.contains("goals") || !j["goals"].is_array() || j["goals"].empty())
    throw UsageError("a goals file is {\"goals\": [...]} with at least one goal");
  std::vector<Goal> goals;
  std::set<std::string> ids;
  for (size_t i = 0; i < j["goals"].size(); ++i) {
    goals.push_back(parse_goal(j["goals"][i], i));
    if (!ids.insert(goals.back().id).second)
      throw UsageError("goal " + goals.back().id + ": the id is used twice");
  }
  return goals;
}

std::vector<SetAside> parse_set_aside(const json& j) {
  std::vector<SetAside> out;
  if (!j.is_object() || !j.contains("set_aside")) return out;
  if (!j["set_aside"].is_array()) throw UsageError("'set_aside' is a list of {records, why}");
  for (const auto& e : j["set_aside"]) {
    if (!e.is_object() || e.size() != 2 || !e.contains("records") || !e.contains("why") ||
        !e["records"].is_string() || !e["why"].is_string() ||
        e["records"].get<std::string>().empty() || e["why"].get<std::string>().empty())
      throw UsageError("'set_aside' holds " + e.dump() + ", not {\"records\": ..., \"why\": ...}");
    out.push_back({e["records"].get<std::string>(), e["why"].get<std::string>()});
  }
  return out;
}

std::vector<GoalResult> evaluate_goals(const std::vector<Goal>& goals,
                                       const std::vector<SourcedResult>& records,
                                       const std::map<std::string, double>& highest_ceilings) {
  std::vector<GoalResult> out;
  for (const Goal& g : goals) {
    GoalResult res;
    res.goal = &g;
    bool all = true;
    std::vector<double> values;
    for (const Shape& shape : g.problems) {
      GoalRow row = judge(g, shape, records, highest_ceilings);
      row.met = row.measured && holds(g, row.value);
      // A tie within noise where the goal allows one: the paired median's 95% CI (or, for a
      // median of several processes, their range) reaches the bound and starts within
      // kTieMargin of it.
      if (!row.met && row.measured && row.ci_hi > 0 && holds(g, row.ci_hi) &&
          row.ci_lo >= g.bound * (1 - kTieMargin) &&
          std::find(g.ties.begin(), g.ties.end(), shape) != g.ties.end()) {
        row.met = true;
        row.how += std::string(", a tie within noise (") +
                   (row.processes ? "the processes' range " : "95% CI of the paired median ") +
                   printed(row.ci_lo, "%.4f") + "-" + printed(row.ci_hi, "%.4f") + "x)";
      }
      // Said where it is a tenth of a percent or more, or decides the row.
      if (row.measured && row.bias > 0) {
        const bool unsettled =
            row.met && !holds(g, row.value * (g.at_most ? 1 + row.bias : 1 - row.bias));
        if (unsettled || row.bias >= 0.0005)
          row.how += ", two variants in a rotated order: within " +
                     printed(100 * row.bias, "%.1f") +
                     "% either way (the timing path's phase, docs/design.md)";
        if (unsettled) {
          row.met = false;
          row.how += ", so unsettled";
        }
      }
      all = all && (g.geomean ? row.measured : row.met);
      if (row.measured) values.push_back(row.value);
      res.rows.push_back(std::move(row));
    }
    if (g.geomean) {
      GoalRow mean;
      mean.problem = "geometric mean over " + std::to_string(g.problems.size()) + " problems";
      mean.measured = values.size() == g.problems.size();
      if (mean.measured) {
        mean.value = geometric_mean(values);
        mean.met = holds(g, mean.value);
        mean.how = "of the rows above";
      }
      all = mean.met;
      res.rows.push_back(std::move(mean));
    }
    res.met = all;
    out.push_back(std::move(res));
  }
  return out;
}

std::string goal_value_text(GoalMetric m, double v, bool finer) {
  switch (m) {
    case GoalMetric::pct_ceiling:
      return printed(v, finer ? "%.2f%%" : "%.1f%%");
    case GoalMetric::tflops:
      return printed(v, finer ? "%.1f TFLOP/s" : "%.0f TFLOP/s");
    case GoalMetric::median_us:
      return printed(v, finer ? "%.3f us" : "%.2f us");
    default:
      return printed(v, finer ? "%.4fx" : "%.3fx");
  }
}

namespace {

/// A judged value as printed: with one more digit where the usual ones would print the bound
/// itself on the wrong side of it ("1.000x" judged below 1.000).
std::string judged_text(const Goal& g, double v) {
  const std::string text = goal_value_text(g.metric, v);
  return text == goal_value_text(g.metric, g.bound) && !holds(g, v)
             ? goal_value_text(g.metric, v, true)
             : text;
}

}  // namespace

std::string goals_markdown(const std::vector<GoalResult>& results) {
  std::string summary =
                  "| goal | issue | criterion | needed | met | weakest (or the geometric mean) |\n"
                  "|---|---:|---|---:|---|---:|\n",
              detail;
  for (const GoalResult& res : results) {
    const Goal& g = *res.goal;
    int met = 0, judged = 0;
    const GoalRow* weakest = nullptr;  // the measured row farthest on the wrong side of the bound
    int unmeasured = 0;
    for (const GoalRow& row : res.rows) {
      const bool mean_row = g.geomean && row.problem.rfind("geometric mean", 0) == 0;
      if (!mean_row) {
        ++judged;
        met += row.met;
        unmeasured += !row.measured;
      }
      if (g.geomean ? !mean_row : !row.measured) continue;
      if (!weakest || (g.at_most ? row.value > weakest->value : row.value < weakest->value))
        weakest = &row;
    }
    const std::string state =
        res.met     ? "**met**"
        : g.geomean ? "not met"
                    : "not met (" + std::to_string(met) + " of " + std::to_string(judged) + ")";
    const std::string bound_text =
        std::string(g.at_most ? "<= " : ">= ") + goal_value_text(g.metric, g.bound);
    std::string weakest_text =
        weakest && weakest->measured ? judged_text(g, weakest->value) : std::string("-");
    if (unmeasured > 0) {  // "-" alone would read as a minus sign before the count
      const std::string count = std::to_string(unmeasured) + " not measured";
      weakest_text = weakest_text == "-" ? count : weakest_text + "; " + count;
    }
    summary += "| " + g.id + " | " + std::to_string(g.issue) + " | " + g.text + " | " + bound_text +
               " | " + state + " | " + weakest_text + " |\n";
    const std::string bound =
        std::string(g.at_most ? "<= " : ">= ") + goal_value_text(g.metric, g.bound);
    detail += "\n**" + g.id + "** " + g.text + " (" + g.family + ", " +
              std::string(dtype_name(g.dtype)) + "; needed " + bound +
              (g.geomean ? " as the geometric mean" : " at each problem") + ")\n\n" +
              "| problem | measured | how | rung | run | met |\n|---|---:|---|---|---|---|\n";
    for (const GoalRow& row : res.rows) {
      if (!row.measured) {
        detail += "| " + row.problem + " | not measured | | | | no |\n";
        continue;
      }
      detail += "| " + row.problem + " | " + judged_text(g, row.value) + " | " + row.how + " | " +
                row.variant + " | " + row.run + " | " + (row.met ? "yes" : "no") + " |\n";
    }
  }
  return summary + detail;
}

}  // namespace klab

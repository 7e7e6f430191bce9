#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/klab/cli.hpp"
#include "klab/core/errors.hpp"
#include "klab/core/text_table.hpp"

namespace klab::cli {

namespace {

std::string check_cell(const Result& r) {
  if (r.status == "skipped") return "skipped: " + r.reason;
  if (r.status == "error") return "ERROR: " + r.reason;
  std::string cell;
  if (!r.checked)
    cell = "-";
  else if (!r.check.passed)
    cell = r.check.summary() +
           (r.vendor_checked && !r.vendor_check.passed
                ? "; " + r.vendor_check.reference + ": " + r.vendor_check.summary()
                : "") +
           (r.seed ? "; --seed " + std::to_string(r.seed) +
                         " (and the same --dist) draws these inputs again"
                   : "");
  else
    cell = r.check.plain_fp64() ? "pass" : "pass (" + r.check.reference + ")";
  if (r.ceiling.pct > 100)
    cell += "; ABOVE CEILING: the ceiling was measured too low or the counts are wrong";
  return cell;
}

std::vector<std::string> row(const Result& r) {
  std::string problem = r.problem.shape.str() + " " + std::string(dtype_name(r.problem.dtype));
  if (r.problem.misalign) problem += " +" + std::to_string(r.problem.misalign);
  if (!r.problem.layout.empty()) problem += " " + r.problem.layout;
  if (r.block_threads) problem += " block=" + std::to_string(r.block_threads);
  std::vector<std::string> c{r.variant + (r.baseline_variant ? " (baseline)" : ""), problem};
  if (r.timed) {
    c.push_back(fmt::format("{:.4f}", r.timing.stats.median));
    c.push_back(fmt::format("{:.1f}%", 100 * r.timing.stats.rel_noise));
    c.push_back(fmt::format("{:.2f}", r.tflops));
    c.push_back(fmt::format("{:.0f}", r.gbps));
    c.push_back(r.ceiling.name.empty() ? "-"
                                       : fmt::format("{:.1f}% {}", r.ceiling.pct, r.ceiling.name));
    c.push_back(r.baseline.id.empty() ? "-" : fmt::format("{:.2f}x", r.baseline.speedup));
    std::string clk = r.timing.sm_clock_max_mhz ? fmt::format("{}-{}", r.timing.sm_clock_min_mhz,
                                                              r.timing.sm_clock_max_mhz)
                                                : "-";
    if (r.timing.throttled_samples) clk += " (throttled)";
    if (r.timing.discarded_samples) clk += fmt::format(" ({} dropped)", r.timing.discarded_samples);
    c.push_back(clk);
  } else {
    for (int i = 0; i < 7; ++i) c.push_back("-");
  }
  c.push_back(check_cell(r));
  return c;
}

}  // namespace

int report_above_ceiling(const std::vector<Result>& results) {
  int n = 0;
  std::string first;
  for (const auto& r : results)
    if (r.timed && r.ceiling.pct > 100) {
      if (n++ == 0)
        first = fmt::format("{} at {} ({:.1f}% of {})", r.variant, r.problem.shape.str(),
                            r.ceiling.pct, r.ceiling.name);
    }
  if (n > 0)
    std::cerr << "klab: error: " << n << " result(s) above 100% of their measured ceiling, first "
              << first << ": the ceiling was measured too low or the counts are wrong\n";
  return n;
}

std::string format_table(const std::vector<Result>& results, bool markdown) {
  const std::vector<std::string> head{"variant", "problem",   "median ms",  "noise",  "TFLOP/s",
                                      "GB/s",    "% ceiling", "x baseline", "SM MHz", "check"};
  std::vector<std::vector<std::string>> rows{head};
  for (const auto& r : results) rows.push_back(row(r));
  // Numbers right-aligned; the clock column too in text, left in markdown (as the tables in the
  // worklogs have it).
  std::vector<bool> right(head.size(), false);
  for (size_t i = 2; i <= (markdown ? 7u : 8u); ++i) right[i] = true;
  return render_table(rows, markdown, right);
}

std::string tuned_summary(const std::vector<Result>& results, bool markdown) {
  std::vector<std::vector<std::string>> rows{
      {"variant", "problem", "configuration", "chosen from"}};
  for (const auto& r : results) {
    if (r.tuned.config.empty()) continue;
    std::string from = r.tuned.source + (r.tuned.path.empty() ? "" : " (" + r.tuned.path + ")");
    if (const std::string flag = tuned_dispatch_flag(r); !flag.empty()) from += "; " + flag;
    rows.push_back({r.variant, row(r)[1], r.tuned.config, from});
  }
  if (rows.size() == 1) return "";
  return std::string("\nThe tuned rungs' choices:\n") + (markdown ? "\n" : "") +
         render_table(rows, markdown, std::vector<bool>(4, false));
}

void write_json(const std::vector<Result>& results, const std::string& path) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) arr.push_back(to_json(r));
  if (path == "-") {
    std::cout << arr.dump(1) << "\n";
    return;
  }
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write " + path);
  out << arr.dump(1) << "\n";
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw UsageError(path + " is not valid JSON: " + std::string(e.what()));
  }
}

std::vector<Result> read_json(const std::string& path) {
  return results_of(read_json_file(path), path);
}

std::vector<Result> results_of(const nlohmann::json& j, const std::string& path) {
  std::vector<Result> out;
  try {
    if (j.is_array())
      for (const auto& e : j) out.push_back(result_from_json(e));
    else
      out.push_back(result_from_json(j));
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(path + " is not a klab result file: " + std::string(e.what()));
  }
  return out;
}

bool is_results_json(const nlohmann::json& j) {
  if (j.is_object()) return j.contains("variant");
  return j.is_array() && (j.empty() || (j.front().is_object() && j.front().contains("variant")));
}

bool is_ceilings_json(const nlohmann::json& j) {
  return j.is_object() && j.contains("ceilings") && j["ceilings"].is_array() &&
         !j.contains("variant");
}

void for_each_input_json(const std::vector<std::string>& inputs, const InputVisitor& each) {
  namespace fs = std::filesystem;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(in))
        if (e.path().extension() == ".json") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      for (const std::string& f : found) {
        const nlohmann::json j = read_json_file(f);
        // Run folders hold other JSON besides these (tune tables, profiles): passed over.
        if (is_ceilings_json(j))
          each(in, f, JsonKind::ceilings, j);
        else if (is_results_json(j))
          each(in, f, JsonKind::results, j);
      }
    } else if (fs::exists(in)) {
      const nlohmann::json j = read_json_file(in);
      each(in, in, is_ceilings_json(j) ? JsonKind::ceilings : JsonKind::results, j);
    } else {
      throw UsageError("no such file or folder: " + in);
    }
  }
}

ResultFiles read_result_files(const std::vector<std::string>& inputs) {
  ResultFiles out;
  for_each_input_json(inputs, [&](const std::string&, const std::string& path, JsonKind kind,
                                  const nlohmann::json& j) {
    if (kind != JsonKind::results) return;
    out.files.push_back(path);
    for (Result& r : results_of(j, path)) out.records.push_back(std::move(r));
  });
  if (out.files.empty()) throw UsageError("no result JSON files in the given inputs");
  return out;
}

void keep_highest(std::map<std::string, double>& m, const std::string& name, double value) {
  if (auto [it, fresh] = m.emplace(name, value); !fresh) it->second = std::max(it->second, value);
}

void each_ceiling(const nlohmann::json& j,
                  const std::function<void(const std::string&, double)>& each) {
  for (const auto& c : j.at("ceilings"))
    if (c.is_object() && c.value("name", nlohmann::json()).is_string() &&
        c.value("value", nlohmann::json()).is_number() && c["value"].get<double>() > 0)
      each(c["name"].get<std::string>(), c["value"].get<double>());
}

void emit_markdown(const std::string& md, const std::string& out_md, const std::string& readme,
                   const std::string& section, bool to_stdout) {
  if (!out_md.empty()) {
    std::ofstream(out_md) << md;
    std::cerr << "wrote " << out_md << "\n";
  } else if (to_stdout && readme.empty()) {
    std::cout << md;
  }
  if (!readme.empty()) {
    replace_marked_section(readme, section, md);
    std::cerr << "updated " << readme << "\n";
  }
}

std::vector<Result> newest_per_record(std::vector<Result> results) {
  auto id = [](const Result& r) {
    return r.variant + " " + r.problem.str() + " b" + std::to_string(r.block_threads) + " " +
           r.timing.mode;
  };
  std::map<std::string, size_t> newest;  // id -> index of its newest record
  for (size_t i = 0; i < results.size(); ++i) {
    auto [it, fresh] = newest.emplace(id(results[i]), i);
    if (!fresh && results[i].timestamp > results[it->second].timestamp) it->second = i;
  }
  std::vector<Result> out;
  for (size_t i = 0; i < results.size(); ++i)
    if (newest.at(id(results[i])) == i) out.push_back(std::move(results[i]));
  return out;
}

void replace_marked_section(const std::string& path, const std::string& name,
                            const std::string& md) {
  const std::string begin = "<!-- klab:" + name + ":begin -->",
                    end = "<!-- klab:" + name + ":end -->";
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw UsageError(path + " has no " + begin + " ... " + end + " section");
  text = text.substr(0, b + begin.size()) + "\n" + md + text.substr(e);
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write " + path);
  out << text;
}

}  // namespace klab::cli

// klab goals: the issues' "done when" criteria (a goals file, docs/goals.json) judged against
// committed result records, one table row per criterion and problem with the value, the rung and
// the run it came from (klab/harness/goals.hpp holds the rules). No GPU: it reads records.
#include <filesystem>
#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/goals.hpp"

namespace klab::cli {

namespace {

namespace fs = std::filesystem;

struct GoalsOptions {
  std::string goals_file, out_md, readme, section = "goals";
  std::vector<std::string> inputs;
};

/// A run folder is named <date>_<commit>_<what> ("2026-12-05_382bde2_hgemm_v22").
bool is_run_name(const std::string& name) {
  auto digits = [&](size_t at, size_t n) {
    for (size_t k = at; k < at + n; ++k)
      if (k >= name.size() || !std::isdigit(static_cast<unsigned char>(name[k]))) return false;
    return true;
  };
  return digits(0, 4) && name.size() > 11 && name[4] == '-' && digits(5, 2) && name[7] == '-' &&
         digits(8, 2) && name[10] == '_';
}

/// A record file's run folder and its path from there ("<run>/a/bench.json"): the nearest folder
/// above the file named as a run is; UsageError when none is (the rules judge run by run).
std::pair<std::string, std::string> run_of(const std::string& file) {
  const fs::path abs = fs::absolute(file).lexically_normal();
  for (fs::path dir = abs.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path())
    if (is_run_name(dir.filename().string()))
      return {dir.filename().string(),
              (dir.filename() / abs.lexically_relative(dir)).generic_string()};
  throw UsageError(file +
                   " is in no run folder (<date>_<commit>_<what>): goals are judged run by run");
}

/// Each goal's family, rungs, baseline, dtypes and problems against the registry: a criterion
/// that names something klab does not have could never be met and would never say why.
void check_against_registry(const Goal& g) {
  try {
    const Family& f = registry().family(g.family);
    auto takes = [&](DType t) {
      if (std::find(f.dtypes.begin(), f.dtypes.end(), t) == f.dtypes.end())
        throw UsageError(f.name + " does not take dtype " + std::string(dtype_name(t)));
    };
    takes(g.dtype);
    if (g.metric == GoalMetric::x_dtype) takes(parse_dtype(g.against));
    for (const std::string& rung : g.rungs)
      if (registry().variant(rung).first != &f)
        throw UsageError("'rungs' holds " + rung + ", not a rung of " + f.name);
    if (g.metric == GoalMetric::x_baseline) registry().variant(g.against);
    for (const Shape& shape : g.problems) {
      Problem p;
      p.family = f.name;
      p.shape = shape;
      p.dtype = g.dtype;
      validate_problem(f, p);
    }
  } catch (const UsageError& e) {
    throw UsageError("goal " + g.id + ": " + e.what());
  }
}

int run_goals(const GoalsOptions& o) {
  const nlohmann::json file = read_json_file(o.goals_file);
  const std::vector<Goal> goals = parse_goals(file);
  for (const Goal& g : goals) check_against_registry(g);
  const std::vector<SetAside> set_aside = parse_set_aside(file);
  std::vector<int> dropped(set_aside.size(), 0);
  std::set<std::string> runs_seen;
  auto set_aside_at = [&](const std::string& path) {  // path from the run folder on
    for (size_t i = 0; i < set_aside.size(); ++i)
      if ((path + "/").rfind(set_aside[i].records + "/", 0) == 0) return int(i);
    return -1;
  };
  std::vector<SourcedResult> records;
  std::map<std::string, double> highest;  // each ceiling's highest measurement (klab roofline's)
  size_t files = 0;
  for_each_input_json(o.inputs, [&](const std::string&, const std::string& f, JsonKind kind,
                                    const nlohmann::json& j) {
    const auto [run, path] = run_of(f);
    const int aside = set_aside_at(path);
    if (kind == JsonKind::ceilings) {
      if (aside < 0)
        each_ceiling(j, [&](const std::string& name, double v) { keep_highest(highest, name, v); });
      return;
    }
    runs_seen.insert(run);
    ++files;
    for (Result& r : results_of(j, f)) {
      if (aside >= 0) {
        ++dropped[aside];
        continue;
      }
      if (r.ceiling.value > 0) keep_highest(highest, r.ceiling.name, r.ceiling.value);
      records.push_back({std::move(r), run});
    }
  });
  if (files == 0) throw UsageError("no result JSON files in the given inputs");
  // An entry whose run is among the inputs must set something aside: else it is a typo.
  for (size_t i = 0; i < set_aside.size(); ++i) {
    const std::string run = set_aside[i].records.substr(0, set_aside[i].records.find('/'));
    if (dropped[i] == 0 && runs_seen.count(run))
      throw UsageError("set_aside " + set_aside[i].records + ": no records under it in the inputs");
  }
  const std::vector<GoalResult> judged = evaluate_goals(goals, records, highest);
  int met = 0;
  for (const GoalResult& g : judged) met += g.met;
  std::string aside_md;
  for (size_t i = 0; i < set_aside.size(); ++i)
    if (dropped[i] > 0)
      aside_md += "| " + set_aside[i].records + " | " + std::to_string(dropped[i]) + " | " +
                  set_aside[i].why + " |\n";
  if (!aside_md.empty())
    aside_md =
        "\nSet aside (`set_aside` in the goals file):\n\n| records under | records | why "
        "|\n|---|---:|---|\n" +
        aside_md;
  std::string inputs;
  for (const std::string& in : o.inputs) inputs += (inputs.empty() ? "" : ", ") + in;
  const std::string md =
      goals_markdown(judged) + aside_md + "\nGenerated by `klab goals " + o.goals_file + "` from " +
      std::to_string(records.size()) + " record(s) in " + std::to_string(files) + " file(s) (" +
      inputs + "): " + std::to_string(met) + " of " + std::to_string(judged.size()) +
      " criteria met. A record counts only if it was timed cold (L2 flushed), at the rung's own "
      "block size, and did not fail its check; a tuned rung's record that names its choice, "
      "only if it ran the committed table's dispatch (the table found, no tune cache's "
      "choice). Each problem is judged on one run folder, the "
      "newest that measured it (both sides, for a ratio to another library or dtype): its best "
      "rung there, each rung by its newest record in it. Speed-ups over a baseline are the "
      "paired median of rounds interleaved launch by launch where the record has them, else the "
      "ratio of the two medians; where the run holds the rung's paired benchmark from two or "
      "more processes of the newest record's build, the median of their paired medians (a "
      "process's ratio can sit in one of two modes a few percent apart). Where a criterion "
      "allows a tie within noise at a problem, a paired median under its bound meets it when the "
      "median's 95% confidence interval (the record's, or from the samples of the rung and the "
      "baseline of that benchmark; for several processes, their range) reaches the bound and "
      "starts no more than 1% under it. "
      "Correctness at every shape and the sanitizers are the GPU "
      "tests' and the runs' logs, not judged here.\n";
  emit_markdown(md, o.out_md, o.readme, o.section, true);
  return 0;
}

}  // namespace

void add_goals_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<GoalsOptions>();
  auto* cmd = app.add_subcommand(
      "goals", "the issues' done-when criteria judged against result records (no GPU)");
  cmd->add_option("goals", o->goals_file, "the goals file (docs/goals.json)")->required();
  cmd->add_option("inputs", o->inputs, "result JSON files or folders (results/h200)")->required();
  cmd->add_option("--md", o->out_md, "write the markdown here (default: stdout)")
      ->check(writable_path);
  cmd->add_option("--readme", o->readme, "replace the <!-- klab:SECTION --> section of this file")
      ->check(CLI::ExistingFile);
  cmd->add_option("--section", o->section, "with --readme: the section (default: goals)");
  out.emplace_back(cmd, [o] { return run_goals(*o); });
}

}  // namespace klab::cli

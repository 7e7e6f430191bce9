// klab timeline: where one launch's time goes. A variant with a traced kernel (trace phases: each
// CTA marks its phases with its SM's cycle counter and the GPU's nanosecond clock, see
// klab/device/phase_trace.cuh) is checked against the reference with that kernel, then launched
// cold (L2 flushed) --launches times; the table gives, per phase, when the CTAs reached it from
// the launch's first mark and since their own start, as medians over the launches. The marks
// cost a few instructions a phase: the traced kernel is not the timed rung, and `klab bench`
// remains the measure of time; this says how the time divides.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "apps/klab/cli.hpp"
#include "apps/klab/extra_commands.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/phase_timeline.hpp"
#include "klab/harness/phase_trace_hooks.hpp"

namespace klab::cli {

namespace {

struct TimelineOptions {
  std::string target, shape, dtype, json_path, from, readme, section = "timeline";
  int launches = 30;
  uint64_t seed = 0;
};

std::string timeline_markdown(const nlohmann::json& rec) {
  const LaunchTimeline t = timeline_from_json(rec.at("timeline"));
  std::vector<double> spans = rec.at("span_us_per_launch").get<std::vector<double>>();
  std::sort(spans.begin(), spans.end());
  const auto& m = rec.at("machine");
  return fmt::format(
      "### {} at {} {}\n\n{}\nMedians over {} cold launches (L2 flushed before each; first mark "
      "to last per launch: {:.2f} - {:.2f} µs); the traced kernel passed its check: {}. Generated "
      "by `klab timeline` on {} (build {}), {}.\n",
      rec.at("variant").get<std::string>(), rec.at("problem").get<std::string>(),
      rec.at("dtype").get<std::string>(), timeline_table(t), rec.at("launches").get<int>(),
      spans.front(), spans.back(), rec.at("check_passed").get<bool>() ? "yes" : "NO",
      m.at("device").value("name", std::string("?")),
      m.at("build").value("git_sha", std::string("?")), rec.at("timestamp").get<std::string>());
}

void emit(const TimelineOptions& o, const std::string& md) {
  if (o.readme.empty()) {
    std::cout << md;
    return;
  }
  replace_marked_section(o.readme, o.section, md);
  std::cerr << "updated " << o.readme << "\n";
}

int run_timeline(const TimelineOptions& o) {
  if (!o.from.empty()) {
    std::ifstream in(o.from);
    if (!in) throw UsageError("timeline --from " + o.from + ": cannot read it");
    emit(o, timeline_markdown(nlohmann::json::parse(in)));
    return 0;
  }
  if (o.target.empty() || o.shape.empty())
    throw UsageError("timeline: a variant and --shape (or --from a record)");
  auto [f, v] = registry().variant(o.target);
  if (!find_trace_hooks(v->info.id)) throw UsageError(v->info.id + " has no traced kernel");
  const Problem p = make_problem(
      *f, o.shape, o.dtype.empty() ? std::string(dtype_name(v->info.dtypes.front())) : o.dtype);
  TracedRun run = trace_variant(*f, *v, p, o.launches, o.seed);
  if (run.launches.empty()) {
    std::cerr << v->info.id << ": " << run.record.status << ": " << run.record.reason << "\n";
    return 1;
  }
  std::vector<double> spans;
  for (const auto& l : run.launches) spans.push_back(l.span_us);
  nlohmann::json rec = {{"kind", "timeline"},
                        {"variant", v->info.id},
                        {"family", f->name},
                        {"problem", p.shape.str()},
                        {"dtype", std::string(dtype_name(p.dtype))},
                        {"check_passed", run.record.check.passed},
                        {"status", run.record.status},
                        {"launches", o.launches},
                        {"timeline", to_json(median_timeline(run.launches))},
                        {"span_us_per_launch", spans},
                        {"machine", machine_json()},
                        {"timestamp", now_iso8601()}};
  if (!o.json_path.empty()) {
    std::ofstream(o.json_path) << rec.dump(1) << "\n";
    std::cerr << "wrote " << o.json_path << "\n";
  }
  emit(o, timeline_markdown(rec));
  return run.record.check.passed ? 0 : 1;
}

}  // namespace

void add_timeline_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<TimelineOptions>();
  auto* cmd = app.add_subcommand(
      "timeline", "where one launch's time goes: the phases of a variant's traced kernel, per CTA");
  cmd->add_option("target", o->target, "a variant id with a traced kernel");
  cmd->add_option("--shape", o->shape, "problem dimensions");
  cmd->add_option("--dtype", o->dtype, "dtype (default: the variant's first)");
  cmd->add_option("--launches", o->launches, "cold launches to take the medians over")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", o->seed, "input seed (0: fresh, recorded)");
  cmd->add_option("--json", o->json_path, "write the record here");
  cmd->add_option("--from", o->from, "no GPU work: the table of a record written by --json");
  cmd->add_option("--readme", o->readme, "replace the <!-- klab:SECTION --> section of this file");
  cmd->add_option("--section", o->section, "with --readme: the section (default: timeline)");
  out.emplace_back(cmd, [o] { return run_timeline(*o); });
}

}  // namespace klab::cli

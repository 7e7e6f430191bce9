// klab: check and benchmark GPU kernel ladders. Usage errors: one line, exit 2, before GPU work.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "klab/core/errors.hpp"

namespace {

void add_common(CLI::App* cmd, klab::cli::Common& c, bool targets_required = false) {
  auto* t = cmd->add_option("targets", c.targets, "families or variant ids (see `klab list`)");
  if (targets_required) t->required();
  klab::cli::add_shape_option(cmd, c.shape,
                              "problem dimensions, e.g. n=1048576 or m=4096,n=4096,k=4096");
  cmd->add_option("--dtype", c.dtype, "f32, f16, bf16, e4m3, e5m2");
  cmd->add_option("--layout", c.layout,
                  "with --shape: the tensors' layout, where a family has several");
  cmd->add_option("--misalign", c.misalign,
                  "with --shape: shift every base pointer by this many elements (>= 0)")
      ->check(klab::cli::non_negative_integer());
  cmd->add_option("--json", c.json_path, "write result records to this file ('-' for stdout)")
      ->check(klab::cli::writable_path_or_stdout);
  klab::cli::add_seed_option(cmd, c.seed);
  cmd->add_option("--dist", c.dist, "input distribution: normal, uniform, heavy, all");
  cmd->add_flag("--quiet", c.quiet, "no progress line");
  cmd->add_option("--device", c.device,
                  "gpu, cpu or all (default): which rungs of the selected families run")
      ->check(CLI::IsMember({"gpu", "cpu", "all"}));
}

void add_bench_opts(CLI::App* cmd, klab::cli::Common& c) {
  cmd->add_flag("--hot", c.hot, "hot L2: no flush, no rotation (labelled 'hot')");
  klab::cli::add_noise_option(cmd, c.noise);
  klab::cli::add_max_time_option(cmd, c.max_time);
  cmd->add_option("--rounds", c.rounds,
                  "benchmark the variants of a problem in this many interleaved rounds, samples "
                  "pooled (--max-time split between them): clock and power drifts fall on all")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--interleave", c.interleave,
                "time the GPU variants of a problem launch by launch, in rounds (cold only): the "
                "speed-up over the baseline also as the median of the rounds' paired ratios");
  cmd->add_option("--samples", c.samples_path,
                  "with --interleave: every timed sample into this file, one a line (round, place "
                  "in the round, variant, input set, ms, SM MHz), each problem after a '#' line "
                  "naming its variants")
      ->check(klab::cli::writable_path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "klab — a kernel engineering lab: ladders of GPU kernels, checked and measured honestly"};
  app.require_subcommand(1);
  klab::cli::Common c;

  auto* list = app.add_subcommand("list", "families and their ladders");
  list->add_option("targets", c.targets, "families to list");

  auto* run = app.add_subcommand("run", "check and benchmark every family at its headline shapes");
  add_common(run, c);
  add_bench_opts(run, c);

  auto* check = app.add_subcommand(
      "check", "check variants against the fp64 reference (headline + awkward shapes)");
  add_common(check, c);
  check->add_flag("--awkward", c.awkward, "with --shape: add the family's awkward shapes");
  c.dist = "normal";

  auto* bench = app.add_subcommand("bench", "check once, then benchmark");
  add_common(bench, c, true);
  add_bench_opts(bench, c);

  std::vector<int> blocks{32, 64, 128, 256, 512, 1024};
  std::string sweep_plot;
  auto* sweep = app.add_subcommand("sweep", "block-size sweep of one variant");
  add_common(sweep, c, true);
  add_bench_opts(sweep, c);
  sweep->add_option("--blocks", blocks, "block sizes (multiples of 32, 32..1024)")->delimiter(',');
  sweep->add_option("--plot", sweep_plot, "also plot the sweep (.png, .svg or .pdf; needs --json)")
      ->check(klab::cli::plot_path);

  bool remeasure = false;
  std::string ceil_json;
  auto* ceilings =
      app.add_subcommand("ceilings", "measure (or show cached) bandwidth and compute ceilings");
  ceilings->add_flag("--remeasure", remeasure, "ignore the cache");
  ceilings->add_option("--json", ceil_json, "also write them as JSON")
      ->check(klab::cli::writable_path);
  std::vector<std::string> read_at;
  ceilings
      ->add_option("--read-at", read_at,
                   "also the read bandwidth a transfer of these sizes sustains (e.g. 32M,96MiB,"
                   "1G: bytes, K, M or G as powers of 1024), against the read ceiling")
      ->delimiter(',');

  std::vector<std::string> report_in;
  std::string report_md, report_plot, report_readme, compare_with;
  double max_delta = 2.0;
  auto* report = app.add_subcommand("report", "markdown tables and plots from result JSONs");
  report->add_option("inputs", report_in, "result JSON files or folders")->required();
  report->add_option("--md", report_md, "write the markdown here (default: stdout)")
      ->check(klab::cli::writable_path);
  report->add_option("--plot", report_plot, "plot file (.png, .svg or .pdf)")
      ->check(klab::cli::plot_path);
  report
      ->add_option("--readme", report_readme,
                   "replace the <!-- klab:results --> section of this README")
      ->check(CLI::ExistingFile);
  auto* compare_opt =
      report->add_option("--compare", compare_with, "compare medians with these results");
  report
      ->add_option("--max-delta", max_delta,
                   "with --compare: fail when a median moves more than this %")
      ->needs(compare_opt)
      ->check([](const std::string& v) {
        return std::atof(v.c_str()) >= 0 ? std::string() : "must not be negative, got " + v;
      });
  std::vector<std::string> report_families;
  report->add_option("--family", report_families, "only these families");
  std::string report_section = "results";
  report->add_option("--section", report_section,
                     "with --readme: the <!-- klab:NAME:begin/end --> section to replace "
                     "(default: results; another name keeps a second run's table apart)");
  bool report_memory = false;
  report->add_flag("--memory", report_memory,
                   "the device memory table (klab memory's records): tensors, workspace, peak");
  std::vector<std::string> report_against;
  report->add_option("--against", report_against,
                     "another library's variant id (e.g. decode_attention.flashinfer_paged): the "
                     "family's fastest rung against it at each problem both timed");
  bool report_fast_state = false;
  report->add_flag("--fast-state", report_fast_state,
                   "add each record's speed-up in the fast state: its baseline's 10th-percentile "
                   "time over its own, beside the medians' (for GPUs that step between power "
                   "states)");

  bool report_steps = false;
  report->add_flag("--steps", report_steps,
                   "the ladder as steps (an ablation table): at each problem, the rungs in their "
                   "ladder's order, each one's speed-up over the rung before it and over the "
                   "first, from the same run's medians");

  bool report_processes = false;
  report->add_flag("--processes", report_processes,
                   "the paired speed-ups process by process: every interleaved record kept (not "
                   "the newest of each), grouped by build, variant and problem, with the "
                   "processes' median, range and each value");

  klab::cli::CommandList extra;
  for (auto add : {klab::cli::add_roofline_commands, klab::cli::add_inspect_commands,
                   klab::cli::add_scaling_command, klab::cli::add_tune_command,
                   klab::cli::add_profile_report_command, klab::cli::add_memory_command,
                   klab::cli::add_timeline_command, klab::cli::add_goals_command})
    add(app, extra);

  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
      known |= sub->get_name() == argv[1];
    if (!known) {
      std::string names;
      for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      std::cerr << "klab: error: unknown command '" << argv[1] << "' (commands: " << names << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "klab: error: " << e.what() << "\n";
    return 2;
  }

  try {
    if (*list) return klab::cli::cmd_list(c);
    if (*run) return klab::cli::cmd_run(c);
    if (*check) return klab::cli::cmd_check(c);
    if (*bench) return klab::cli::cmd_bench(c);
    if (*sweep) return klab::cli::cmd_sweep(c, blocks, sweep_plot);
    if (*ceilings) return klab::cli::cmd_ceilings(remeasure, ceil_json, read_at);
    if (*report)
      return klab::cli::cmd_report(report_in, report_md, report_plot, report_readme, compare_with,
                                   max_delta, report_families, report_section, report_memory,
                                   report_fast_state, report_against, report_steps,
                                   report_processes);
    for (const auto& [sub, fn] : extra)
      if (*sub) return fn();
  } catch (const klab::UsageError& e) {
    std::cerr << "klab: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "klab: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}

#pragma once
// Commands beyond the core ones register themselves here, each from its own file, so that a
// new tool is one new file plus one line in kAdders (main.cpp).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "apps/klab/cli_options.hpp"

namespace klab::cli {

/// A subcommand and what running it does (returns the exit code; UsageError escapes).
using CommandList = std::vector<std::pair<CLI::App*, std::function<int()>>>;

/// The sampling options of commands that benchmark (tune, scaling).
struct SamplingOptions {
  double noise = 0.01, max_time = 2.0;
  uint64_t seed = 0;
  bool quiet = false;
  /// Copies them into run options (seed, target noise, time cap).
  template <class RunOptions>
  void apply(RunOptions& opt) const {
    opt.seed = seed;
    opt.bench_cfg.target_rel_noise = noise;
    opt.bench_cfg.max_time_s = max_time;
  }
};

/// --noise, --max-time, --seed, --quiet.
inline void add_sampling_options(CLI::App* cmd, SamplingOptions& o) {
  add_noise_option(cmd, o.noise);
  add_max_time_option(cmd, o.max_time);
  add_seed_option(cmd, o.seed);
  cmd->add_flag("--quiet", o.quiet, "no progress line");
}

void add_roofline_commands(CLI::App& app, CommandList& out);  // cmd_roofline.cpp: roofline, predict
void add_inspect_commands(CLI::App& app,
                          CommandList& out);  // cmd_inspect.cpp: occupancy, sass, profile, doctor
void add_scaling_command(CLI::App& app, CommandList& out);  // cmd_scaling.cpp: CPU core scaling
void add_tune_command(CLI::App& app, CommandList& out);     // cmd_tune.cpp: autotuning
void add_profile_report_command(CLI::App& app,
                                CommandList& out);           // profile_records.cpp: profile tables
void add_memory_command(CLI::App& app, CommandList& out);    // cmd_memory.cpp: device memory
void add_timeline_command(CLI::App& app, CommandList& out);  // cmd_timeline.cpp: traced phases
void add_goals_command(CLI::App& app, CommandList& out);     // cmd_goals.cpp: issue criteria

}  // namespace klab::cli

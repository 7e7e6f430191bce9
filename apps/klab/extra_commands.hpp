#pragma once
// Commands beyond the core ones register themselves here, each from its own file, so that a
// new tool is one new file plus one line in kAdders (main.cpp).
#include <CLI/CLI.hpp>
#include <functional>
#include <utility>
#include <vector>

namespace klab::cli {

/// A subcommand and what running it does (returns the exit code; UsageError escapes).
using CommandList = std::vector<std::pair<CLI::App*, std::function<int()>>>;

void add_roofline_commands(CLI::App& app, CommandList& out);  // cmd_roofline.cpp: roofline, predict
void add_inspect_commands(CLI::App& app, CommandList& out);   // cmd_inspect.cpp: occupancy, sass, profile
void add_scaling_command(CLI::App& app, CommandList& out);    // cmd_scaling.cpp: CPU core scaling
void add_tune_command(CLI::App& app, CommandList& out);       // cmd_tune.cpp: autotuning
void add_profile_report_command(CLI::App& app, CommandList& out);  // profile_records.cpp: profile tables

}  // namespace klab::cli

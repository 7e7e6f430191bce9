// klab occupancy / sass / profile / doctor: look inside the kernels a variant launches.
//   occupancy  cmd_occupancy.cpp: resources, occupancy by hand and by the CUDA API
//   sass       cmd_sass.cpp: the SASS instruction mix (cuobjdump)
//   profile    cmd_profile.cpp: Nsight Compute on `klab bench`, summarised
//   doctor     cmd_doctor.cpp: check + compute-sanitizer + Nsight Compute, one line per problem
// Shared: targets.cpp (resolving the variant and problem), tool_runner.cpp (spawning tools),
// metric_sets.cpp and ncu_runner.cpp (running ncu).
#include <memory>

#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "apps/klab/inspect.hpp"

namespace klab::cli {

void add_inspect_commands(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<InspectOptions>();

  auto* occ = app.add_subcommand(
      "occupancy",
      "the kernels a variant launches, their resources and occupancy (by hand and by CUDA)");
  add_target_opts(occ, *o, true);
  out.emplace_back(occ, [o] { return cmd_occupancy(*o); });

  auto* sass =
      app.add_subcommand("sass", "SASS instruction mix of a variant's kernels (cuobjdump)");
  add_target_opts(sass, *o, false);
  sass->add_option("--kernel", o->kernel,
                   "kernels whose (mangled or demangled) name contains this (given again: "
                   "contains every one); no GPU needed")
      ->expected(1)
      ->take_all();
  sass->add_flag("--list", o->list, "list the kernels in this binary (filtered by --kernel)");
  sass->add_option("--out", o->out, "write the SASS listing to this file")->check(writable_path);
  sass->add_option("--ptx", o->ptx, "write the PTX of the same kernels to this file")
      ->check(writable_path);
  sass->add_option("--json", o->json,
                   "append the instruction mix as a record to this JSON file (with a variant id; "
                   "`klab profile-report` renders it)")
      ->check(writable_path);
  sass->add_option("--binary", o->binary,
                   "read the kernels from this file (a library such as libcublasLt.so, or a "
                   "cubin) instead of klab's own binary; with --kernel or --list");
  sass->add_option("--arch", o->arch,
                   "with --binary: the architecture whose SASS to read, e.g. sm_90 (a library "
                   "holds several)");
  sass->add_option("--table", o->table,
                   "write a markdown table of the kernels' loops to this file, one row a "
                   "kernel: its instructions and local-memory ones, its main loop's length and "
                   "most frequent math, its tensor loop's length, tensor-core instructions and "
                   "their share, shared, global, barriers and inner loops")
      ->check(writable_path);
  sass->add_option("--readme", o->readme,
                   "put that table into this markdown file's section (with --section): between "
                   "<!-- klab:SECTION:begin --> and <!-- klab:SECTION:end -->");
  sass->add_option("--section", o->section, "the --readme section the table goes into");
  out.emplace_back(sass, [o] { return cmd_sass(*o); });

  auto* prof = app.add_subcommand(
      "profile",
      "Nsight Compute summary of variants' kernels under `klab bench`, one after another");
  prof->add_option(
          "variants", o->variants,
          "variant ids, e.g. sgemm.v05_2d_blocktile sgemm.baseline_cublas (see `klab list`)")
      ->required();
  add_problem_opts(prof, *o);
  prof->add_option("--set", o->set, "sol, memory, stalls or all")
      ->check(CLI::IsMember({"sol", "memory", "stalls", "all"}));
  prof->add_option("--out", o->out,
                   "keep the raw ncu CSV, the program's log and the command in this folder")
      ->check(writable_folder);
  prof->add_option("--json", o->json,
                   "append the parsed metrics to this JSON file (for `klab profile-report`)")
      ->check(writable_path);
  out.emplace_back(prof, [o] { return cmd_profile(*o); });

  auto* doctor = app.add_subcommand(
      "doctor",
      "diagnose a variant: its check, compute-sanitizer (memcheck, racecheck, initcheck, "
      "synccheck) and Nsight Compute memory metrics; one line per problem found (exit 1)");
  add_target_opts(doctor, *o, true);
  out.emplace_back(doctor, [o] { return cmd_doctor(*o); });
}

}  // namespace klab::cli

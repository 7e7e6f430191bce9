#pragma once
// The inspect commands' shared options, and resolving a variant id (+ --shape, --dtype) to the
// variant and the problem to look at. Bad input: UsageError, before any GPU work.
#include <CLI/CLI.hpp>
#include <array>
#include <string>
#include <vector>

#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/registry.hpp"

namespace klab::cli {

struct InspectOptions {
  std::string variant, shape, dtype;
  std::vector<std::string> variants;  // profile: one or more variant ids, profiled in turn
  std::vector<std::string> kernel;    // sass: substrings a kernel's name holds, every one
  std::string out;                    // sass: SASS file; profile: folder
  std::string ptx;                    // sass: PTX file
  bool list = false;                  // sass: list the kernels in this binary
  std::string set = "all";            // profile: sol | memory | stalls | all
  std::string json;                   // profile, sass: append a record to this JSON file
  std::string binary;           // sass: read kernels from this file instead of klab's own binary
  std::string arch;             // sass: with --binary, the SASS architecture to read (sm_90, ...)
  std::string table;            // sass: write a markdown table of the kernels' loops to this file
  std::string readme, section;  // sass: ... or into this file's marked section
};

struct Target {
  const Family* family;
  const Variant* variant;
  Problem problem;
};

/// The variant and the problem to inspect: --shape (+ --dtype), else the family's first headline
/// problem the variant runs (of --dtype when given). GPU variants only.
Target resolve(const InspectOptions& o);

/// UsageError naming `what` when there is no GPU.
void require_gpu(const std::string& what);

/// "variant  problem  on DEVICE (sm_NN, N SMs)".
void print_header(const Target& t);

/// The positional variant id, --shape and --dtype.
void add_target_opts(CLI::App* cmd, InspectOptions& o, bool required);

/// --shape and --dtype alone (add_target_opts without the variant).
void add_problem_opts(CLI::App* cmd, InspectOptions& o);

/// Where a captured kernel's launch came from: "" for klab itself, a library's file name, or
/// "launched through the driver".
std::string short_origin(const CapturedKernel& k);

/// "1.23 GB", "4.5 KB", ...
std::string bytes_text(double b);
/// "(x,y,z)".
std::string dim3_text(const std::array<unsigned, 3>& d);

}  // namespace klab::cli

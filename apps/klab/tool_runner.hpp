#pragma once
// Spawning the external tools klab drives (cuobjdump, ncu, compute-sanitizer, klab itself) and
// capturing what they print. Host code only.
#include <string>

namespace klab::cli {

/// s in single quotes for /bin/sh, inner quotes escaped.
std::string quote(const std::string& s);

/// What a command printed and its exit code (-1 when it did not exit normally).
struct Output {
  int code = -1;
  std::string text;
};

/// Runs `cmd` through /bin/sh and captures its stdout (redirect stderr in `cmd` to keep it).
Output run(const std::string& cmd);

/// This executable's path (/proc/self/exe).
std::string self_exe();

/// PATH, then $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin (and Nsight Compute's own
/// install folders for ncu). "" when absent.
std::string find_tool(const std::string& name);

/// find_tool, or UsageError naming `command` and what it needs (`what`, e.g. "Nsight Compute").
std::string need_tool(const std::string& name, const std::string& command, const std::string& what);

}  // namespace klab::cli

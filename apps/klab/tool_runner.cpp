// Spawning external tools and capturing their output.
#include "apps/klab/tool_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "klab/core/errors.hpp"

namespace klab::cli {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p);
}

}  // namespace

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Output run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw Error("cannot run: " + cmd);
  Output o;
  std::array<char, 1 << 16> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.text.append(buf.data(), n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot read /proc/self/exe: " + ec.message());
  return p.string();
}

std::string find_tool(const std::string& name) {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view s(path);
    for (size_t a = 0; a <= s.size();) {
      size_t b = s.find(':', a);
      if (b == std::string_view::npos) b = s.size();
      if (b > a) dirs.emplace_back(std::string(s.substr(a, b - a)));
      a = b + 1;
    }
  }
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env)) dirs.emplace_back(fs::path(v) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  if (name ==
      "ncu") {  // /opt/nvidia/nsight-compute/<version>/, /usr/local/cuda/nsight-compute-<version>/
    std::error_code ec;
    std::vector<fs::path> installs;
    for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
      installs.push_back(e.path());
    for (const auto& e : fs::directory_iterator("/usr/local/cuda", ec))
      if (e.path().filename().string().starts_with("nsight-compute")) installs.push_back(e.path());
    std::sort(installs.rbegin(), installs.rend());  // newest version first
    dirs.insert(dirs.end(), installs.begin(), installs.end());
  }
  for (const auto& d : dirs)
    if (executable(d / name)) return (d / name).string();
  return {};
}

std::string need_tool(const std::string& name, const std::string& command,
                      const std::string& what) {
  std::string p = find_tool(name);
  if (p.empty())
    throw UsageError(command + " needs " + what + " (" + name +
                     "), which is not on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin");
  return p;
}

}  // namespace klab::cli

#include "klab/harness/profiler/cuobjdump.hpp"

#include <algorithm>

#include "klab/harness/profiler/text.hpp"

namespace klab {

using profiler_text::split_lines;
using profiler_text::starts_with;
using profiler_text::trim;

std::vector<DeviceSymbol> parse_cuobjdump_symbols(std::string_view text) {
  std::vector<DeviceSymbol> out;
  std::string source;
  for (std::string_view line : split_lines(text)) {
    const std::string_view t = trim(line);
    if (starts_with(t, "identifier = ")) {
      source = std::string(trim(t.substr(13)));
      continue;
    }
    // CUDA 13.0's cuobjdump: "STT_FUNC STB_LOCAL STO_ENTRY name"; 13.5's (pip's nvidia-cuda-
    // cuobjdump): "FUNC LOCAL DEFAULT ENTRY name".
    const bool entry = t.find("STO_ENTRY") != std::string_view::npos ||
                       (starts_with(t, "FUNC ") && t.find(" ENTRY ") != std::string_view::npos);
    if (!entry) continue;
    const size_t sp = t.find_last_of(" \t");
    if (sp == std::string_view::npos) continue;
    std::string name(t.substr(sp + 1));
    if (std::none_of(out.begin(), out.end(), [&](const DeviceSymbol& s) { return s.name == name; }))
      out.push_back({std::move(name), source});
  }
  return out;
}

std::string extract_ptx_entry(std::string_view ptx, std::string_view name) {
  std::string header, out;
  bool in_entry = false, opened = false;
  int depth = 0;
  for (std::string_view line : split_lines(ptx)) {
    const std::string_view t = trim(line);
    if (!in_entry) {
      if (starts_with(t, ".version") || starts_with(t, ".target") ||
          starts_with(t, ".address_size")) {
        if (starts_with(t, ".version")) header.clear();  // a new module
        header.append(t).append("\n");
      }
      const size_t e = t.find(".entry ");
      if (e != std::string_view::npos && t.substr(e + 7, name.size()) == name &&
          t.substr(e + 7 + name.size(), 1) == "(") {
        in_entry = true;
        out = header + "\n";
      }
    }
    if (in_entry) {
      out.append(line).append("\n");
      // Braces of inline-asm scopes nest inside the body: count them (comments aside).
      const std::string_view code = line.substr(0, line.find("//"));
      depth += static_cast<int>(std::count(code.begin(), code.end(), '{'));
      opened |= depth > 0;
      depth -= static_cast<int>(std::count(code.begin(), code.end(), '}'));
      if (opened && depth <= 0) return out;
    }
  }
  return in_entry ? out : std::string();
}

}  // namespace klab

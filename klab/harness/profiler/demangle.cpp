#include "klab/harness/profiler/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "klab/harness/profiler/text.hpp"

namespace klab {

using profiler_text::starts_with;

std::string demangle(std::string_view mangled) {
  const std::string m(mangled);
  if (!starts_with(m, "_Z")) return m;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(m.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : m;
}

}  // namespace klab

#pragma once
// C++ symbol names as the NVIDIA tools print them (mangled). Host code only.
#include <string>
#include <string_view>

namespace klab {

/// "_Z3fooPf" -> "foo(float*)"; the input unchanged when it is not an Itanium-mangled name.
std::string demangle(std::string_view mangled);

}  // namespace klab

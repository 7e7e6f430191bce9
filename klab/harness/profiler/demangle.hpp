#pragma once
// C++ symbol names as the NVIDIA tools print them (mangled). Host code only.
#include <string>
#include <string_view>

namespace klab {

/// "_Z3fooPf" -> "foo(float*)". A name that is not Itanium-mangled (as Nsight Compute prints
/// them, already demangled) comes back with its anonymous-namespace qualifiers dropped: Nsight's
/// function-base names print them as "<unnamed>::" and, once the scope before them is cut, as
/// "unnamed>::" ("void unnamed>::k<unnamed>::Cfg, int>(...)" -> "void k<Cfg, int>(...)").
std::string demangle(std::string_view mangled);

/// A demangled function without its parameters and return type, qualifiers and template
/// arguments kept: "void ns::(anonymous namespace)::k<int, 4>(float const*)" ->
/// "ns::(anonymous namespace)::k<int, 4>".
std::string function_name(std::string_view demangled);
/// Without the template arguments: "ns::k<int, 4>" -> "ns::k".
std::string without_template_arguments(std::string_view name);
/// Without the qualifiers: "ns::(anonymous namespace)::k<int, 4>" -> "k<int, 4>".
std::string unqualified(std::string_view name);

}  // namespace klab

#pragma once
// Parsers for cuobjdump's symbol table (`cuobjdump -symbols`) and PTX listing (`cuobjdump -ptx`).
// Host code only, tested on embedded samples. The SASS listing is parsed in sass.hpp.
#include <string>
#include <string_view>
#include <vector>

namespace klab {

/// A kernel (STO_ENTRY symbol) in `cuobjdump -symbols` output, with the source it came from.
struct DeviceSymbol {
  std::string name;    ///< mangled
  std::string source;  ///< the module's identifier (source file), "" if not printed
};
std::vector<DeviceSymbol> parse_cuobjdump_symbols(std::string_view text);

/// The PTX of one kernel from `cuobjdump -ptx` output (which holds whole modules): the
/// module's .version/.target lines, then the `.entry name(` line through its closing brace.
/// "" when the kernel is not there.
std::string extract_ptx_entry(std::string_view ptx, std::string_view name);

}  // namespace klab

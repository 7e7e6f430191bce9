#include "apps/klab/extra_commands.hpp"

namespace klab::cli {

void add_inspect_commands(CLI::App&, CommandList&) {}  // not yet implemented

}  // namespace klab::cli

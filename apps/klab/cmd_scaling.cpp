#include "apps/klab/extra_commands.hpp"

namespace klab::cli {

void add_scaling_command(CLI::App&, CommandList&) {}  // not yet implemented

}  // namespace klab::cli

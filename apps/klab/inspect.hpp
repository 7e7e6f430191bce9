#pragma once
// The commands that look inside a variant's kernels, one file each; add_inspect_commands
// (cmd_inspect.cpp) registers them. Each returns the exit code; UsageError escapes to main().
#include "apps/klab/targets.hpp"

namespace klab::cli {

int cmd_occupancy(const InspectOptions& opt);  // cmd_occupancy.cpp
int cmd_sass(const InspectOptions& opt);       // cmd_sass.cpp
int cmd_profile(const InspectOptions& opt);    // cmd_profile.cpp
int cmd_doctor(const InspectOptions& opt);     // cmd_doctor.cpp

}  // namespace klab::cli

#pragma once
// Every parser of NVIDIA tool output in this folder, for code that reads all of them (klab's
// inspect commands). Code that reads one format includes that format's header.
#include "klab/harness/profiler/cuobjdump.hpp"  // IWYU pragma: export
#include "klab/harness/profiler/demangle.hpp"   // IWYU pragma: export
#include "klab/harness/profiler/ncu_csv.hpp"    // IWYU pragma: export
#include "klab/harness/profiler/sass.hpp"       // IWYU pragma: export

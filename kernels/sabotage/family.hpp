#pragma once
// The sabotage family: a 1-D three-point stencil whose rungs are wrong or slow on purpose, one
// planted fault each, so that `klab doctor` has something to find. Left out of `klab run`, of the
// registry's correctness tests and of reports (Family::sabotaged); reached by name only.
//
//   y[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1],  x outside [0, n) = 0   (f32)
#include "klab/harness/family.hpp"

namespace klab::sabotage {

/// Threads per block of every rung; v00, v01 and v03 stage one element per thread in shared memory.
inline constexpr int kBlock = 256;

Family make_sabotage();

// One factory per rung, each in its own file (vNN_*.cu).
Variant gpu_v00_correct();
Variant gpu_v01_smem_race();
Variant gpu_v02_misaligned_vector();
Variant gpu_v03_silent_nan();
Variant gpu_v04_slow_uncoalesced();

}  // namespace klab::sabotage

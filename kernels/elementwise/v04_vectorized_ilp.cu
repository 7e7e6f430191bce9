// v04 vectorized + ILP: four independent 16-byte loads per input issued before any use.
// Adds over v03: 64 bytes in flight per input per thread, so fewer resident threads are needed
// to cover DRAM latency (Little's law: bytes in flight = bandwidth x latency).
// Expected bottleneck: DRAM bandwidth, at the copy ceiling.
// Requirements: as v03.
#include "kernels/elementwise/vectorized.cuh"

namespace klab::elementwise {

Variant gpu_v04_vectorized_ilp(Op op) {
  return gpu_variant(op, "v04_vectorized_ilp", "16-byte vectors, 4 independent loads in flight per input",
                     [op](const Problem& p, Buffers& b, const LaunchArgs& a) { launch_vectorized<4>(op, p, b, a); });
}

}  // namespace klab::elementwise

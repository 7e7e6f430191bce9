// v04 vectorized + ILP: four independent 16-byte loads per input issued before any use.
// Adds over v03: 64 bytes in flight per input per thread, so fewer resident threads are needed
// to cover DRAM latency (Little's law: bytes in flight = bandwidth x latency).
// Expected bottleneck: DRAM bandwidth, at the copy ceiling.
// Measured (session 1): slower than v03, most of all in grayscale (77% of copy against 95%).
// ptxas gives v04 36-44 registers (add, saxpy, grayscale) where full occupancy allows 32, and the
// grid was sized for 2048 resident threads per SM (grid_full_wave): 1.3-1.6 waves, the last a
// tail. Session 3's change (in vectorized.cuh, so v03 too): the grid is one resident wave from
// the occupancy API (device::grid_resident_wave). Prediction: grayscale v04 within 3% of v03 and
// the map ops within 2%; v03 (32 registers or fewer, full occupancy) unchanged.
// Requirements: as v03.
#include "kernels/elementwise/vectorized.cuh"

namespace klab::elementwise {

Variant gpu_v04_vectorized_ilp(Op op) {
  return gpu_variant(op, "v04_vectorized_ilp",
                     "16-byte vectors, 4 independent loads in flight per input",
                     [op](const Problem& p, Buffers& b, const LaunchArgs& a) {
                       launch_vectorized<4>(op, p, b, a);
                     });
}

}  // namespace klab::elementwise

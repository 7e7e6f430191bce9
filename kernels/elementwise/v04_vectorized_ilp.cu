// v04 vectorized + ILP: four independent 16-byte loads per input issued before any use.
// Adds over v03: 64 bytes in flight per input per thread, so fewer resident threads are needed
// to cover DRAM latency (Little's law: bytes in flight = bandwidth x latency).
// Expected bottleneck: DRAM bandwidth, at the copy ceiling.
// Measured: slower than v03, most of all in grayscale. ptxas gives v04 36-44 registers (add,
// saxpy, grayscale) where full occupancy allows 32, and the grid was sized for 2048 resident
// threads per SM (grid_full_wave): 1.3-1.6 waves, the last a tail. So the grid became one
// resident wave from the occupancy API (device::grid_resident_wave, in vectorized.cuh, so v03
// too; commit 7bbc0b3). Prediction: grayscale v04 within 3% of v03 and the map ops within 2%; v03
// (32 registers or fewer, full occupancy) unchanged.
// Measured: refuted. v04 is where it was, v03 unchanged: the wave count was not the cause. Not
// yet measured, the next suspects: each thread's 4 loads reach 4 rows of 16 bytes a block apart,
// so a warp's requests touch 4x the DRAM pages at once, and the loads are issued as one batch
// before any use, so a block's memory traffic comes in bursts instead of a steady stream. The
// numbers and the runs: kernels/elementwise/README.md.
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

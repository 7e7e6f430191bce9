// v03 vectorized: 16-byte loads and stores (LDG.E.128 / STG.E.128), grid-stride.
// Adds over v02: 4x (f32) or 8x (bf16) fewer memory instructions for the same bytes, and
// 16 bytes in flight per input per thread instead of 4 or 2.
// Expected bottleneck: DRAM bandwidth; close to the copy ceiling once enough bytes are in flight.
// Requirements: 16-byte aligned pointers, else it takes v02's path (checked at launch);
// n % vector width handled by a scalar tail.
#include "kernels/elementwise/vectorized.cuh"

namespace klab::elementwise {

Variant gpu_v03_vectorized(Op op) {
  return gpu_variant(op, "v03_vectorized", "16-byte vector loads/stores (v02's path if misaligned)",
                     [op](const Problem& p, Buffers& b, const LaunchArgs& a) {
                       launch_vectorized<1>(op, p, b, a);
                     });
}

}  // namespace klab::elementwise

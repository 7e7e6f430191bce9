// v14 multistage, A transposed, 256 x 128: v13's pipeline on cuBLAS's FFMA tile shape (256 x 128
// x 8 blocks of 8 warps, 64 x 64 warp tiles, 8 x 16 per lane: 128 accumulators, one block per
// SM, 3 stages), the shape v12 tried with A row-major (measured slower than v09).
// Adds over v13: twice the outputs per lane. Per k-step a lane issues 2 LDS.128 of A and 4 of B
// for 128 FFMA (v13: 2 + 2 for 64), so shared-memory traffic per flop drops by a quarter, and
// each warp has 128 independent FFMA per k-step to cover its own LDS latency: with one block
// (2 warps per scheduler) that ILP is what keeps the issue slots busy, as in cuBLAS (whose issue
// slots stay busy with 8 warps per SM).
// Expected: 89-96% of cuBLAS at 4096^3, if ptxas fits it in 255 registers without spills
// (cuBLAS's kernel spills a little, by Nsight Compute's local traffic).
// Measured: below v09 (docs/worklogs/gemm.md); main loop 1289 instructions for 1024 FFMA
// (`klab sass`).
// Requirements: as v13.
#include "kernels/sgemm/multistage.cuh"

namespace klab::sgemm {

namespace {

using Config = MultistageAtConfig<256, 128, 8, 64, 64, 8, 16, 256, 3, 1>;

}  // namespace

Variant gpu_v14_multistage_at_256x128() {
  return multistage_variant<Config>(
      "v14_multistage_at_256x128",
      "v13's pipeline with 256x128 blocks and 8x16 lanes, 3 stages, one block per SM");
}

}  // namespace klab::sgemm

// v12 multistage 256x128: v11's pipeline with cuBLAS's FFMA tile shape: 256 x 128 x 16 blocks of 8
// warps, 64 x 64 warp tiles, 8 x 16 outputs per lane (128 accumulators), one block per SM.
// Adds over v11: twice the outputs per lane, and 4 k-steps per A read (LDS.128), which the 255
// registers of one block per SM allow (ptxas: 255, no spills). Per 4 k-steps a lane issues 8
// LDS.128 of A and 16 of B for 512 FFMA; v11 issues 16 LDS.64 and 8 LDS.128 for 256.
// Why: it is the shape of cuBLAS's kernel on this GPU (sm80_xmma_gemm_..._tilesize256x128x8_
// stage3_warpsize4x2x1_ffma: 254 registers, one block of 8 warps per SM; Nsight Compute in
// results/h200/2026-11-30_e02c6b8_transpose_gemm/profile_transpose_gemm.txt). With one block per
// SM, the 3-stage pipeline has to hide the barrier that v10's second block used to cover.
// Expected: 90-98% of cuBLAS at 4096^3.
// Measured: slower than v09 and v11 (docs/worklogs/gemm.md).
// Requirements: as v11 (16-byte path, else v09's scalar path).
#include "kernels/sgemm/multistage.cuh"

namespace klab::sgemm {

namespace {

using Config = MultistageConfig<256, 128, 16, 64, 64, 8, 16, 256, 3, 1, 4>;

}  // namespace

Variant gpu_v12_multistage_256x128() {
  return multistage_variant<Config>(
      "v12_multistage_256x128",
      "v11's pipeline with 256x128 blocks and 8x16 lanes, one block per SM");
}

}  // namespace klab::sgemm

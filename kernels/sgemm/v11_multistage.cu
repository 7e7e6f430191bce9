// v11 multistage: v09's block, warp and thread tiles (128 x 128 x 16, 32 x 64, 8 x 8), fed by a
// kStages-deep cp.async pipeline instead of v09's register staging.
// Adds over v09/v10:
//  - Global -> shared copies are cp.async (16 bytes each, zero-filled past the edges): no
//    staging registers (v09 holds 4 float4 per thread across the k loop) and no shared stores
//    issued by the threads, so the k loop issues only LDS.128 and FFMA.
//  - kStages = 3 tiles in flight: tile t + 2 is loading while tile t is computed, so a k-tile's
//    global latency has two tiles' worth of math to hide behind, and one barrier per k-tile.
//  - A stays row-major in shared memory (cp.async cannot transpose). A lane reads 2 k-steps of
//    one A row with one LDS.64 (8 rows: 4 loads per k-step where v09's transposed layout needs
//    2 LDS.128); 8 lanes share each row (broadcast) and A rows are padded so the two rows of a
//    half-warp fall in different banks; B reads are 8 consecutive float4s per quarter-warp: no
//    bank conflicts on the read side.
// Why: Nsight Compute showed v10 (= v09 at 4096^3) issuing on fewer cycles than cuBLAS, with
// barrier, long-scoreboard and dispatch stalls on top of the 4-warp interleave
// (results/h200/2026-11-30_e02c6b8_transpose_gemm/profile_transpose_gemm.txt). cuBLAS's FFMA
// kernel uses 3 stages.
// Expected: 87-93% of cuBLAS at 4096^3, if the stalls were the pipeline's.
// Measured: slower than v09. The rolled kk loop and the 4 LDS.64 per k-step for A are the likely
// cost; v13 removes both and is no faster (docs/worklogs/gemm.md).
// Requirements: the 16-byte path (k % 4 == 0, n % 4 == 0, 16-byte-aligned A, B, C); any other
// problem runs v09's scalar path.
#include "kernels/sgemm/multistage.cuh"

namespace klab::sgemm {

namespace {

// 128 x 128 x 16 blocks, 32 x 64 warps, 8 x 8 lanes, 256 threads, 3 stages, 2 blocks per SM.
// k-steps per A read: 2 (LDS.64). 4 (LDS.128) would halve the A reads but spills under the 128
// registers two blocks per SM allow, as does unrolling the kk loop (ptxas: 12-40 bytes of
// spills); with 2 and the kk loop rolled it fits in 127.
using Config = MultistageConfig<128, 128, 16, 32, 64, 8, 8, 256, 3, 2, 2>;

}  // namespace

Variant gpu_v11_multistage() {
  return multistage_variant<Config>(
      "v11_multistage", "v09's tiles fed by a 3-stage cp.async pipeline (no register staging)");
}

}  // namespace klab::sgemm

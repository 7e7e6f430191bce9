// v09 warp tiling: v08's double-buffered, conflict-free kernel reorganised in three levels —
// block tile (128 x 128 x 16, 8 warps), warp tile (32 x 64 per warp), thread tile (8 x 8 per
// lane, as 2 x 2 chunks of 4 x 4 spread 16 rows / 32 columns apart over the warp tile).
// Adds over v08: a warp's 2048 outputs form one compact 32 x 64 piece of C, so per k-step it
// reads 32 + 64 = 96 distinct values from shared memory (v08's warp covered 16 rows x 128
// columns: 144), as broadcast float4s of A and 8 consecutive float4s of B per quarter-warp; its
// C stores are 128-byte runs; and BK = 16 halves the barriers per FLOP. The kernel is a
// template over every tile size (warptile.cuh) — v10 and `klab tune` reuse it.
// Expected bottleneck: FFMA issue with register-bank conflicts and the occasional LDS / barrier
// stall (64 FFMA per 4 LDS.128 per k-step); ~70-85% of FP32 peak, i.e. 85-95% of cuBLAS.
// Measured: below that range, with fewer issue slots active than cuBLAS (Nsight Compute); the
// numbers and the runs: docs/worklogs/gemm.md.
// Requirements: 16-byte paths when k % 4 == 0, n % 4 == 0 and A, B, C are 16-byte aligned;
// otherwise scalar bounds-checked global loads and stores (any m, n, k, any alignment).
#include "kernels/sgemm/warptile.cuh"

namespace klab::sgemm {

namespace {
constexpr int kConfig = 0;  // kTuneSpace[0]: 128x128x16, warp 32x64, thread 8x8, 256 threads
}  // namespace

Variant gpu_v09_warptile() {
  return gpu_variant(
      "v09_warptile", "block / warp / thread tiles (128x128x16, 32x64, 8x8), double-buffered",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch_warptile<kConfig>(gemm_args(p, b), stream_of(args));
      },
      [](const Problem& p) { return grid_fits(p, kTuneSpace[kConfig].block_m); });
}

}  // namespace klab::sgemm

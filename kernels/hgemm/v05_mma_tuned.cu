// v05 mma_tuned: v04's 128x256 block and 8 warps of 64x64 (1 block/SM), retuned pipeline.
// Changes over v04, with the effect each is expected to have at 4096^3:
// - BK = 64 instead of 32, 4 stages of 48 KiB (192 KiB of shared memory): 4 mma steps of 16 per
//   barrier instead of 2, so the one __syncthreads + cp.async.wait per tile (where all 8 warps
//   of the only block on the SM drain together) is paid half as often per flop. With one block
//   per SM nothing else covers that bubble: expected the largest gain, +10-15%.
// - 128-byte swizzled A rows (8 chunks per row, swizzle = row & 7 instead of v04's 4-chunk rows
//   with (row >> 1) & 3): ldmatrix and cp.async stores stay conflict-free (no change, kept so).
// - the refill of a stage spread over mma steps 0..2 (a third of the A and B cp.async passes
//   each) instead of 12 LDGSTS in one burst at step 0: the issue slots interleave with HMMA. +1-3%.
// - no ldmatrix of a stale slot after the last tile (a few % of nothing: correctness hygiene).
// - epilogue staged through shared memory (the 64 KiB C tile reuses the stages): 16-byte
//   coalesced stores of whole 512-byte rows instead of 4-byte fragment stores. ~1-2% at 4096^3
//   (the epilogue is 1/64 of the k loop), more for small K.
// Kept from v04: grouped rasterization (8 tile-rows per group), double-buffered fragments,
// __launch_bounds__(256, 1) (up to 255 registers: the 64x64 fp32 accumulators alone are 128).
// Expected: ~460-500 TFLOP/s at 4096^3 (58-63% of cuBLASLt): still bounded by the mma.sync
// issue rate and the per-tile barrier of a single resident block; v06 tries 2 blocks per SM.
// Measured: just below the predicted range, the tensor pipe far from saturated (Nsight Compute);
// the numbers and the runs: docs/worklogs/gemm.md.
// Requirements: sm_80+, 192 KiB dynamic shared memory (sm_90: 227 KiB max; sm_80: 163 KiB max,
// so this rung fails to launch on A100: use v06 there). Any m, n, k as v04 (cp.async path when
// k % 8 == 0, n % 8 == 0 and the pointers are 16-byte aligned, element copies otherwise).
#include "kernels/hgemm/multistage_sm80.cuh"

namespace klab::hgemm {

namespace {

using Cfg =
    MultistageConfig</*block*/ 128, 256, 64, /*warp*/ 64, 64, /*stages*/ 4, /*blocks/SM*/ 1>;

}  // namespace

Variant gpu_v05_mma_tuned() {
  return multistage_variant<Cfg>(
      "v05_mma_tuned",
      "128x256x64 block, 4 stages, 8 warps of 64x64, spread refill, smem-staged epilogue");
}

}  // namespace klab::hgemm

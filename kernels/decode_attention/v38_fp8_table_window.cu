// v38 fp8_table_window: v22 whose producer takes its page indices from windows of 32 table
// columns, a warp load each, the next window requested a window ahead (TableWindow,
// tma_pages.cuh), instead of each stage's entries loaded one stage ahead.
// Why: Nsight's source counters of v15 at (16, 8k), pages of 16, from DRAM on an H100
// (2026-12-07_7940f11_decode_e4m3_stalls, decode.md "What v15's producer waits for"): 6.4% of
// all samples stall on the producer's use of the stage's table entry (the LDG a stage earlier,
// long scoreboard), against 2.2% on a free slot: while it lives the producer waits for page
// indices three times as long as for the ring. Pages of 16 have four entries a stage (pages of 64
// one), and every 15.5 miss is worse at pages of 16 than at 64.
// What changes: the producer's lanes load 32 consecutive entries of the split's table row at
// once (eight stages at pages of 16, 32 at 64), the first two windows beside the length; a
// stage's lanes take theirs by a shuffle; entering a window requests the next. Nothing else
// (v22's plan, grid, ring, stage pairs and merges).
// Expected bottleneck: DRAM, where the producer stops stalling on its indices.
// Prediction (written before it ran), e4m3, Qwen3-8B heads, on an H100 from DRAM beside v15 and
// v22 in the same run: (16, 8k) and (64, 4k) at pages of 16 from 85% to 88-91% of the read
// ceiling; pages of 64 within 1% of v22 (one entry a stage: little to hide). Refuted if pages of
// 16 gain under 1%.
// Requirements: v22's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v38_fp8_table_window() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 1, .push = true, .stage_group = 2, .grid = kGridCompact, .table_window = true}>(
      "v38_fp8_table_window",
      "v22 whose producer takes its page indices from windows of 32 table columns (a warp load "
      "each, the next window a window ahead) instead of a stage's entries a stage ahead",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

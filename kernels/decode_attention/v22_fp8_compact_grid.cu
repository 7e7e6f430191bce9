// v22 fp8_compact_grid: v15 with the counter path's grid holding only the splits that exist.
// Why: on a ragged batch the (split, row group, sequence) grid gives every sequence the longest
// one's splits. Qwen3-8B's ragged batch of 64 from 100 to 16k on e4m3 (plan_v13's counter path:
// chunks of 2368 keys, seven splits for 16k) launches 3584 CTAs for 1032 splits; the other 2552
// each take a slot for a launch and a length's round trip before they exit. Nsight of v15 there
// (2026-12-05_103cab6_decode_spread): DRAM 68% busy, the SMs' active cycles 13% above their mean
// at the busiest. Here the grid's x enumerates every sequence's splits from the device's lengths
// (compact_grid.cuh: a block scan of seq_lens a CTA, one more round trip before its first copy,
// which the SM's other CTA streams through); nothing else changes.
// Expected bottleneck: as v15's on the ragged batch, less the empty CTAs' slots.
// Prediction (written before it ran), e4m3, beside v15 in the same run: the ragged batch
// 1.04-1.10x v15's speed (pages of 16 and 64); v15's kernels and times on equal lengths.
// Requirements: v15's; the grid's x holds the batch's splits (at most 2^31 - 1).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v22_fp8_compact_grid() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 1, .push = true, .stage_group = 2, .grid = kGridCompact}>(
      "v22_fp8_compact_grid",
      "v15 whose counter path launches only the splits that exist (the grid's x enumerates every "
      "sequence's splits from the device's lengths): no empty CTAs on a ragged batch",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

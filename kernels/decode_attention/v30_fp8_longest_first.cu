// v30 fp8_longest_first: v29's order and chunks on the e4m3 cache, with v15's kernels (two
// stages at once a math warp).
// Why: v15 on the ragged batch (chunks of 2368 keys, slot order) reaches 1.68-1.70x the bf16
// rungs' throughput where issue 15 asks 1.8x; Nsight (2026-12-05_103cab6_decode_spread) had its
// busiest SM active 13% longer than the mean there. The list gives the tail's short splits to the
// SMs that finish first.
// Expected bottleneck: the math warps (e4m3's conversions), DRAM ~70% busy.
// Prediction (written before it ran), e4m3, beside v15 and v29 in the same run: the ragged batch
// 1.03-1.08x v15's speed; against the best bf16 rung of the same run (v29 if it holds) 1.65-1.8x;
// v15's times on equal lengths.
// Measured (2026-12-05_699d86f_decode_v28_v30, _second, 667ed14's _third; an H100): 1.02-1.05x
// v15's speed on the ragged batch; 1.87-1.90x the best bf16 rung there. Not yet on the H200.
// Requirements: v15's; v28's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v30_fp8_longest_first() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 1, .push = true, .stage_group = 2, .grid = kGridWorkList}>(
      "v30_fp8_longest_first", "v15 (e4m3) on v29's longest-first work list and chunks",
      [](const Problem& p) { return plan_longest_first(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

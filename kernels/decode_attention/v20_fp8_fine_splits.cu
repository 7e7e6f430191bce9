// v20 fp8_fine_splits: v15's kernels, with about four CTAs a resident slot where a batch of equal
// lengths has enough row groups (plan_v20), merged by v15's counter path.
// Why: Nsight Compute of v15 at (16, 8k), e4m3, pages of 16 (2026-12-05_103cab6_decode_spread):
// its 256 CTAs (two splits of 4096 keys a row group, one wave of two an SM) left the SMs active
// for 108k to 129k cycles (mean 115k) on equal work, DRAM 71.5% busy, issue slots 25.6% busy: the
// launch lasts as long as its slowest SM, and the mean SM idles ~11% of it. On the ragged batch
// the spread is the same (171k to 227k, mean 200k). A static plan cannot follow CTAs that run at
// different speeds; the block scheduler can, if the work comes in more pieces than slots: at
// (16, 8k) nine splits of 960 keys (1152 CTAs, 4.4 a slot), each SM taking the next CTA when
// one of its two ends. The price: a CTA's start (~2 us to its first data) and its partial's
// store and arrival, nine times a row group instead of twice, which the other CTA of its SM
// streams through; the merge reads nine partials.
// Expected bottleneck: the consumers (issue-latency bound) and the per-CTA starts.
// Prediction (written before it ran), e4m3, beside v15 in the same run: (16, 8k) 1.04-1.08x
// v15's speed (pages of 16 and 64), (64, 4k) (three splits of 1408 keys) 1.00-1.04x; v15's
// plan, and so its time, at (256, 2k), the ragged batch and B = 1.
// Requirements: v15's.
#include "kernels/decode_attention/fine_splits_plan.hpp"
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v20_fp8_fine_splits() {
  // v15's launch (e4m3, swapped operands, pairs of stages) on plan_v20: the counter path's kernel
  // where it splits finer, v15's own kernels (plan_v13) elsewhere.
  return cluster_merge_variant_on<TmaRung{.elem = 1, .push = true, .stage_group = 2}>(
      "v20_fp8_fine_splits",
      "v15 with about four CTAs a resident slot on batches of equal lengths (counter merge), so "
      "that the block scheduler balances SMs that stream at different speeds",
      [](const Problem& p) { return plan_v20(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

// v34 longest_first_merge_in_flight: v29's longest-first work list and chunks with v33's counter
// tail (the CTA's rows stored at once, the merging pass with its loads in flight).
// Why: on the ragged batch the two gains come from different places. v29 orders the splits so
// that the longest start first and chooses the chunk whose list schedule ends soonest (90.7% of
// the H100's read ceiling at pages of 16 and 64, 2026-12-06_826ba41_decode_v32; v13 90.0% and
// 88.9%); v33 shortens each row group's merge after its last split (90.8% at pages of 16 in
// 2026-12-06_dfab43a_decode_v33, v32 90.0%, v13 89.7%). On the H200, issue 15's ragged batch
// stands at 89.1% and 89.9% (v21). The launch's end is the last split's stream plus its row
// group's merge, so a shorter merge moves the end whatever the order.
// What changes: nothing of its own; tma_pages_kernel with kGridWorkList (v28) and
// kCounterCompactTail | kCounterMergeInFlight (v32, v33), which the kernel already composes (the
// tail follows the arrival, the grid only decides which split a CTA is). Where the work list does
// not apply (equal lengths, B = 1) the plan is v13's and the kernel is v33's tail on v13's grid.
// Expected bottleneck: DRAM.
// Prediction (written before it ran), bf16, Qwen3-8B heads, beside v29, v33 and cuDNN's paged
// SDPA in the same run: the ragged batch 1.005-1.015x v29's speed at pages of 16 and 64, and at
// or above v33; (1, 32k) and (1, 128k) within 1% of v33. Refuted if the ragged batch is not
// above both v29 and v33 at either page size.
// Requirements: v28's (a work list in the plan's workspace) and v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v34_longest_first_merge_in_flight() {
  return cluster_merge_variant_on<2, /*kPush*/ true, /*kStageGroup*/ 1, false, 0, kGridWorkList,
                                  /*kEarlyIssue*/ false, /*kOneCtaAnSm*/ false, /*kSteal*/ false,
                                  kCounterCompactTail | kCounterMergeInFlight>(
      "v34_longest_first_merge_in_flight",
      "v29's longest-first work list and chunks with v33's counter tail (the CTA's rows stored at "
      "once, the merging pass with its loads in flight)",
      [](const Problem& p) { return plan_longest_first(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

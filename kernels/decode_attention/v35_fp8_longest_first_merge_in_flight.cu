// v35 fp8_longest_first_merge_in_flight: v30 (e4m3, v29's work list, v15's stage pairs) with
// v33's counter tail (the CTA's rows stored at once, the merging pass with its loads in flight).
// Why: issue 15 asks the e4m3 cache for 1.8x the best bf16 rung's throughput at each shape; on
// the ragged batch v30 reads 1.87-1.88x v29 on the H100 (2026-12-06_826ba41_decode_v32), and v34
// takes v33's tail to v29's list on bf16. With half the bytes a split's stream is shorter and its
// merge, the same fp32 partials as bf16's, a larger share of the launch: the same tail should gain
// e4m3 at least what it gains bf16, or the ratio falls.
// What changes: nothing of its own; tma_pages_kernel with kElem = 1, kStageGroup = 2 (v15),
// kGridWorkList (v28) and kCounterCompactTail | kCounterMergeInFlight (v32, v33). Where the work
// list does not apply the plan is v13's for e4m3, as in v30.
// Expected bottleneck: the math warps (e4m3's conversions), DRAM ~70% busy.
// Prediction (written before it ran), e4m3, beside v30 in the same run: the ragged batch
// 1.005-1.02x v30's speed at pages of 16 and 64; (1, 32k) 1.01-1.03x v30; against the best bf16
// rung of the same run within 1% of v30's ratio or above it. Refuted if the ragged batch is not
// above v30 at either page size.
// Requirements: v30's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v35_fp8_longest_first_merge_in_flight() {
  return cluster_merge_variant_on<1, /*kPush*/ true, /*kStageGroup*/ 2, false, 0, kGridWorkList,
                                  /*kEarlyIssue*/ false, /*kOneCtaAnSm*/ false, /*kSteal*/ false,
                                  kCounterCompactTail | kCounterMergeInFlight>(
      "v35_fp8_longest_first_merge_in_flight",
      "v30 (e4m3, v29's work list, v15's stage pairs) with v33's counter tail (the CTA's rows "
      "stored at once, the merging pass with its loads in flight)",
      [](const Problem& p) { return plan_longest_first(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

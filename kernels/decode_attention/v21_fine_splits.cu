// v21 fine_splits: v20's plan on the bf16 cache: v13's kernels, with about four CTAs a resident
// slot where a batch of equal lengths has enough row groups (plan_v20 at two-byte elements),
// merged by the counter path; v13's plan and time elsewhere.
// Why: the SMs' spread that v20 answers is there on bf16 too, smaller (Nsight on the ragged batch,
// 2026-12-05_103cab6_decode_spread: the busiest SM active 9% longer than the mean, e4m3 13%), and
// bf16 streams closer to DRAM's limit, where an early SM's bandwidth goes to the others.
// v13 clusters (16, 8k)'s two splits in pairs because the counter merge's tail cost ~3% there
// (2026-12-04_6459d2f_decode_v13_pairs); nine splits bring that merge back.
// Prediction (written before it ran), bf16, beside v13 in the same run: (16, 8k) 0.98-1.03x
// v13's speed, (64, 4k) 0.99-1.02x; v13's time elsewhere.
// Requirements: v13's.
#include "kernels/decode_attention/fine_splits_plan.hpp"
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v21_fine_splits() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true}>(
      "v21_fine_splits",
      "v13 on v20's finer splits (bf16): about four CTAs a resident slot on batches of equal "
      "lengths, counter merge",
      [](const Problem& p) { return plan_v20(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

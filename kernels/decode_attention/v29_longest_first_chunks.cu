// v29 longest_first_chunks: v28 on chunks chosen for its order: plan_longest_first simulates the
// block scheduler's list schedule of the longest-first items for each candidate chunk and takes
// the one that ends soonest (longest_first.hpp).
// Why: v13's ragged chunks are capped at half a slot's mean work against a longest sequence that
// starts last, which the list removes; and how the items of a chunk fall onto 264 slots decides
// the tail (the fluid model of v28's header: 2368 keys 90% longest first, 3328 keys 97%, 2048
// 95%): a cost model of the order itself, not of waves, can choose.
// Expected bottleneck: DRAM.
// Prediction (written before it ran), bf16, beside v13, v28 and cuDNN in the same run: the
// ragged batch 1.03-1.07x v13's speed (92-95% of the read ceiling), at or above v28; v13's
// times on equal lengths.
// Measured (2026-12-05_699d86f_decode_v28_v30, _second, 667ed14's _third; an H100): 1.008-1.013x
// v13's speed on the ragged batch, refuted in size; v13's time at (64, 4k). Not yet on the H200.
// Requirements: v28's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v29_longest_first_chunks() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .grid = kGridWorkList}>(
      "v29_longest_first_chunks",
      "v28 on the chunk whose longest-first list schedule, simulated on the host, ends soonest",
      [](const Problem& p) { return plan_longest_first(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

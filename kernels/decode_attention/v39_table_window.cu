// v39 table_window: v36 (bf16, the counter path's kernel, the splits merged by a dependent
// kernel) whose producer takes its page indices from windows of 32 table columns, as v38's
// (TableWindow, tma_pages.cuh).
// Why: bf16 at (1, 128k) stands under 15.1 and 15.2 at pages of 16 and over them at pages of 64
// (2026-12-07_4b3d578_open_goals on the H200, v36: 87.9% of the read ceiling and 0.996x cuDNN's
// paged SDPA against 90.6% and 1.035x), with four times the table entries a key at 16. v15's
// producer at (16, 8k) on e4m3 waits for its stage's entry, loaded one stage ahead, three times
// as long as for a free slot (2026-12-07_7940f11_decode_e4m3_stalls); v36's producer loads them
// the same way.
// What changes: v38's change on v36's kernel and plan; nothing else.
// Expected bottleneck: DRAM.
// Prediction (written before it ran), bf16, Qwen3-8B heads, on an H100 from DRAM beside v36 in the
// same run: (1, 128k) at pages of 16 1.01-1.03x v36's speed (to pages of 64's level), pages of
// 64 within 1%; (16, 8k) at pages of 16 within 1% (v36 there is the counter path at two CTAs an
// SM, its producer's waits hidden by the other CTA). Refuted if (1, 128k) at pages of 16 gains
// under 1%.
// Requirements: v36's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v39_table_window() {
  return cluster_merge_variant_on<TmaRung{.elem = 2,
                                          .push = true,
                                          .counter = kCounterCompactTail | kCounterDependentMerge,
                                          .table_window = true}>(
      "v39_table_window",
      "v36 whose producer takes its page indices from windows of 32 table columns (a warp load "
      "each, the next window a window ahead), as v38's",
      [](const Problem& p) { return counted(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

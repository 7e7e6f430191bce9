// v41 fp8_dependent_window: v37 (e4m3, the counter path's kernel, the splits merged by a
// dependent kernel) with v38's table windows.
// Why: at B = 1 v37 is the e4m3 rung closest to 15.5's 1.8x, and at (1, 128k) it stands at
// 1.741x the bf16 rungs' throughput at pages of 16 against 1.775x at 64 on the H200
// (2026-12-07_4b3d578_open_goals): the page size costs it 2%, as the table entries a key do.
// What changes: v38's change on v37's kernel and plan; nothing else.
// Expected bottleneck: as v37's, less the producer's waits for its page indices.
// Prediction (written before it ran), e4m3, Qwen3-8B heads, on an H100 from DRAM beside v37 in the
// same run: (1, 128k) at pages of 16 1.01-1.03x v37's speed; (1, 32k) within 1% (its gap to 1.8x
// is the same at both page sizes: the launch's fixed costs, not the table). Refuted if (1, 128k)
// at pages of 16 gains under 1%.
// Requirements: v37's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v41_fp8_dependent_window() {
  return cluster_merge_variant_on<TmaRung{.elem = 1,
                                          .push = true,
                                          .stage_group = 2,
                                          .counter = kCounterCompactTail | kCounterDependentMerge,
                                          .table_window = true}>(
      "v41_fp8_dependent_window", "v37 (e4m3, the dependent merge) with v38's table windows",
      [](const Problem& p) { return counted(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

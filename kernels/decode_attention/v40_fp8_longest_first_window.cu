// v40 fp8_longest_first_window: v30 (e4m3, the ragged batch's splits longest first) with v38's
// table windows.
// Why: v30 stands at 1.745x the bf16 rungs' throughput on the ragged batch at pages of 16 and
// 1.755x at 64 on the H200 (2026-12-07_4b3d578_open_goals; 15.5 asks 1.8x); v38's change (the
// producer's page indices a window of 32 table columns ahead) is predicted to help pages of 16
// most (decode.md, "v38 and v39").
// What changes: v38's change on v30's kernels, list and chunks; nothing else.
// Expected bottleneck: as v30's, less the producer's waits for its page indices.
// Prediction (written before it ran), e4m3, Qwen3-8B heads, on an H100 from DRAM beside v30 in
// the same run: the ragged batch at pages of 16 1.01-1.04x v30's speed, at 64 within 1%; equal
// lengths as v38 (v30 there is v15's plan and kernels). Refuted if the ragged batch at pages of
// 16 gains under 1%.
// Requirements: v30's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v40_fp8_longest_first_window() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 1, .push = true, .stage_group = 2, .grid = kGridWorkList, .table_window = true}>(
      "v40_fp8_longest_first_window", "v30 (e4m3, longest first) with v38's table windows",
      [](const Problem& p) { return plan_longest_first(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

// v12 fp8_cluster_merge: v11's cluster merge on v09's e4m3 cache. v09 carries v06's split merge
// (fp32 partials to a workspace, a fence, an atomic, the last CTA's L2 loads), whose ~4 us tail
// the B = 1 sweep (2026-12-03_9445930_decode_b1_sweep) measured on v10: with half the bytes to
// stream, that fixed cost is a larger share of v09's time, and it is why FP8 over bf16 falls
// to 1.09x at (1, 4k) and 1.43-1.47x at (1, 32k) against 1.8-1.9x at the batched shapes.
// What changes: nothing in the kernel; v09's stages with v11's plan (a row group's splits as
// one cluster, at most max_cluster_splits(d, 1)) and merge through distributed shared memory.
// Expected bottleneck: as v11.
// Prediction (written before it ran, and before v11's first run), Qwen3-8B heads, e4m3, against
// v09 in the same run: (1, 4k) 0.75-0.85x v09's time; (1, 32k) 1.05-1.15x v09's speed; (1, 128k)
// 0.97-1.05x; (16, 8k) 1.00-1.04x; the batched shapes (one split) within 1%; ragged within 3%.
// Measured (2026-12-03_698a305_decode_v11_v12_first): a gain at B = 1 (and bf16's long
// sequences), a loss on the ragged batch (a cluster starts only when a GPC has all its slots free
// and holds them until its longest split ends) and, for e4m3, at long B = 1 (16 CTAs a row group
// cannot keep e4m3's stream). So the rung merges in a cluster only where cluster_merge_pays
// (equal lengths; e4m3 up to kClusterMaxLenE4m3 keys) and elsewhere runs v09's plan and counter
// merge. Predicted for that choice (before it ran): v09's time within 1% wherever it falls back,
// the first run's cluster numbers where it does not.
// Requirements: v09's, and v11's at most 16 splits a sequence (8 where one CTA fits an SM).
#include "kernels/decode_attention/tma_pages_kernel.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

Variant gpu_v12_fp8_cluster_merge() {
  auto plan = [](const Problem& p) {
    return plan_v11(dims_of(p), device_info().sm_count, /*elem*/ 1);
  };
  return split_kv_variant(
      "v12_fp8_cluster_merge",
      "v09 (e4m3, swapped operands) with v11's cluster merge: a row group's splits as one "
      "thread-block cluster, merged through distributed shared memory",
      [plan](const Problem& p, Buffers& b) {
        const ClusterSplitPlan pl = plan(p);
        return tma_pages_launch<1, true, true>(p, b, pl, pl.cluster);
      },
      plan, [](const Problem& p) { return tma_pages_limits("v12", dims_of(p), /*elem*/ 1); },
      /*min_sm*/ 90, DType::e4m3);
}

}  // namespace klab::decode_attention

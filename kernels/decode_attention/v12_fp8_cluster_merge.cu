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
// Measured (2026-12-03_698a305_decode_v11_v12_first, _decode_cluster_sweep,
// 2026-12-03_2dc7a86_decode_cluster_bound): a gain where a CTA's chunk is short and the launch
// is one cluster a GPC (B = 1 up to 8k keys: 1.05-1.14x); a loss on the ragged batch (a cluster
// holds its slots until its longest split ends), on batches of 2-8 equal sequences (more
// clusters than fit at once: 0.71-0.82x), and at B = 1 from 16k keys a result that moved between
// runs by more than the gain. So the rung merges in a cluster only where cluster_merge_pays
// (rung_plans.hpp) and elsewhere runs v09's plan and counter merge, its time within 1%.
// Requirements: v09's; where it clusters, v11's at most 16 splits a sequence.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v12_fp8_cluster_merge() {
  return cluster_merge_variant<TmaRung{.elem = 1}>(
      "v12_fp8_cluster_merge",
      "v09 (e4m3, swapped operands) with v11's cluster merge: a row group's splits as one "
      "thread-block cluster, merged through distributed shared memory, where that pays");
}

}  // namespace klab::decode_attention

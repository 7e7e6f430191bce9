// v11 cluster_merge: v10 with a row group's splits merged through distributed shared memory.
// The B = 1 sweep of v10 (2026-12-03_9445930_decode_b1_sweep) takes 7.6 us at 64 keys (one
// split: launch, the first stage, the output) and 11.9 us at 256 (two splits), 12.2 us at 1k:
// ~4 us of v10's time at B = 1 is the split merge's tail (each split's fp32 partial stored to
// global memory, a fence, an atomic on the row group's counter, then the last CTA's two passes
// of dependent L2 loads), beside ~3.5 us of the harness's floor for any launch.
// What changes: a row group's splits are one thread-block cluster along x (rank = split; up to
// 16, Hopper's non-portable size, so a clustered plan_v11 takes chunks of at least 1/16 of the
// longest sequence; 8 at D = 256, one CTA an SM). Each CTA merges its warps into its normalised rows
// and lse in its own shared memory (the freed stages), a cluster barrier, then CTA `rank` merges
// rows rank, rank + cluster size, .. over the sequence's splits' rows by ld.shared::cluster in
// rank order (partial_merge.cuh: the bits v10's counter merge gives) and writes o and lse; a
// second barrier keeps the rows alive until read.
// On that path no workspace, no counters, no fence, no atomic; CTAs of splits past a shorter sequence's exit
// at once (their exit releases the cluster barriers they would hold up).
// Expected bottleneck: at B = 1 the launch and the first stage's round trips; the stream
// elsewhere, as v10.
// Prediction (written before it ran), Qwen3-8B heads, bf16, against v10 in the same run: (1, 4k)
// 12-13.5 us (v10 ~16); (1, 32k) 1.05-1.12x; (1, 128k) 0.97-1.03x (16 splits of 8k keys, one
// CTA an SM: the stream may lose what the tail gains); (16, 8k) 1.00-1.03x; (64, 4k), (256, 2k)
// (one split: the same kernel path) within 1%; the ragged batch within 3%.
// Measured (2026-12-03_698a305_decode_v11_v12_first, _decode_cluster_sweep,
// 2026-12-03_2dc7a86_decode_cluster_bound): a gain where a CTA's chunk is short and the launch
// is one cluster a GPC (B = 1 up to 8k keys: 1.05-1.14x); a loss on the ragged batch (a cluster
// holds its slots until its longest split ends), on batches of 2-8 equal sequences (more
// clusters than fit at once: 0.71-0.82x), and at B = 1 from 16k keys a result that moved between
// runs by more than the gain. So the rung merges in a cluster only where cluster_merge_pays
// (rung_plans.hpp) and elsewhere runs v10's plan and counter merge, its time within 1%.
// Requirements: v10's; where it clusters, at most 16 splits a sequence (8 at D = 256; plan_v11).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v11_cluster_merge() {
  return cluster_merge_variant<TmaRung{.elem = 2}>(
      "v11_cluster_merge",
      "v10 with a row group's splits as one thread-block cluster: each CTA's rows merged by its "
      "peers through distributed shared memory (no workspace, fence or atomic), where that pays");
}

}  // namespace klab::decode_attention

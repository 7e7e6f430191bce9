// v25 cluster_steal: v13's clusters, whose splits share their sequence's stages instead of each
// streaming a fixed chunk.
// Why: the CTAs of one launch stream equal work at different speeds. At (1, 32k) v13's 128 CTAs
// of 2048 keys ended their streams between 27.6 and 37.9 us (median 33.1: `klab timeline`,
// 2026-12-04_54fa11d_decode_v13_long_chunks), so v13 gave long chunks back to the counter path
// (whose 256 CTAs spread alike, 25.1-34.0 us, and whose merge costs more); Nsight on equal work
// at (16, 8k) had the busiest SM active 12% longer than the mean (2026-12-05_103cab6_decode_spread),
// and finer static splits for the block scheduler to balance lost 4-20% (v20, v21: each split
// adds a CTA's start and a partial to merge).
// What changes (tma_pages_kernel.cuh, kSteal): a cluster's CTAs (a row group's splits) take the
// sequence's units of 64 keys: split r first the ring's fill (units r, r + splits, .., one a
// stage), then the next of a counter in rank 0's shared memory, one atom.shared::cluster a stage,
// issued a stage before its table entries are loaded; a CTA that streams faster takes more
// units. The producer writes each slot's unit before its barrier's arrival, and ends the ring
// with a unit of -1. The merge is v13's push merge. Plan (steal_plan.hpp): v13's clusters at
// any chunk where the lengths are equal and the launch makes at most 8 clusters (B = 1 at
// Qwen3-8B's heads: 8 clusters of 16 splits up to 128k keys); v13's plan and kernels elsewhere.
// Expected bottleneck: DRAM, the stream of the slowest cluster; the launch's start and the merge.
// Prediction (written before it ran), bf16, Qwen3-8B heads, beside v13 and cuDNN's paged SDPA
// launch by launch: `klab timeline` at (1, 32k) cold: the last stage done within ~2 us of the
// median CTA's (v13 clustered: 4.7 us after it); `klab bench` (1, 32k) 1.10-1.18x v13 (v13 43-44
// us: 38-40 us), pages of 16 and 64; (1, 128k) 1.02-1.06x v13 (the counter path there); (1, 4k)
// and (1, 16k) level to 1.04x; (1, 1k) level. Refuted if (1, 32k) gains under 5%.
// Measured (2026-12-05_964dca6_decode_v25_v27; docs/worklogs/decode.md): refuted. The streams
// of (1, 32k)'s clusters end within 3.6 us of each other (v13's static chunks: 10.3), but 128
// CTAs on 112 SMs (~34 GB/s an SM) draw less than v13's counter path on all 132: 0.97x v13 at
// (1, 32k), 0.90x at (1, 128k), level at (1, 16k), ~1.1 us slower at (1, 1k) and (1, 4k).
// Requirements: v13's.
#include "kernels/decode_attention/steal_plan.hpp"
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v25_cluster_steal() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .steal = true}>(
      "v25_cluster_steal",
      "v13's clusters whose splits share their sequence's 64-key stages through a counter in "
      "rank 0's shared memory, at any chunk where the lengths are equal and there are at most 8 "
      "clusters",
      [](const Problem& p) { return plan_v25(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

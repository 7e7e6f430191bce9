// v27 fp8_cluster_steal: v25 on the e4m3 cache (v14's kernels, with v25's shared stages).
// Why: issue 15's 1.8x of e4m3 over bf16 misses most at B = 1 ((1, 32k): 1.40x, v09 against
// v13), where the e4m3 rungs use v14's static chunks (or the counter path past 1024 keys) and
// their CTAs' streams spread as bf16's; a bf16 rung that shares its stages (v25) moves the bf16
// side of the ratio, so the e4m3 side needs the same.
// What changes: v14's kernels with kSteal on plan_v25 at one-byte elements (clusters of 16 at
// B = 1 from 2k keys; six 16 KiB stages, the first six units of a split fixed); v14's plan and
// kernels elsewhere.
// Expected bottleneck: DRAM at half bf16's bytes; the launch's start and the merge weigh twice as
// much of the time as in bf16.
// Prediction (written before it ran), e4m3, Qwen3-8B heads, beside v14 and v15 launch by launch:
// (1, 32k) 1.10-1.20x v14; (1, 128k) 1.02-1.08x; (1, 4k) level; against bf16 v25 in the same
// run 1.5-1.7x at (1, 32k) (v09 against v13: 1.40x). Refuted if (1, 32k) gains under 5%.
// Measured (2026-12-05_964dca6_decode_v25_v27): refuted, 0.74x v15 at (1, 32k), 0.62x at
// (1, 128k): the e4m3 stream is bound by its math warps, and the clusters hold half the counter
// path's CTAs.
// Requirements: v14's.
#include "kernels/decode_attention/steal_plan.hpp"
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v27_fp8_cluster_steal() {
  return cluster_merge_variant_on<TmaRung{.elem = 1, .push = true, .steal = true}>(
      "v27_fp8_cluster_steal",
      "v25 on the e4m3 cache: v14's clusters whose splits share their sequence's stages through "
      "a counter in rank 0's shared memory, at any chunk where the lengths are equal and there "
      "are at most 8 clusters",
      [](const Problem& p) { return plan_v25(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

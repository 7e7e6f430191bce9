// v37 fp8_dependent_merge: v36's dependent merge on the e4m3 cache, on v15's kernel (a math warp
// takes its 16 keys of two stages at once) with v32's compact tail: the split kernel ends at its
// stored rows and dependent_merge.cuh's kernel, launched programmatically, merges the splits.
// Why: issue 15's FP8 criterion (1.8x the bf16 rungs' throughput) stands furthest off at B = 1
// (1.46-1.48x at (1, 32k), 1.68-1.71x at (1, 128k) on the H200), where the e4m3 stream is half
// as long as bf16's and the launch's fixed costs, the merge's among them, weigh twice as much.
// Expected bottleneck: as v36's.
// Prediction (written before it ran), Qwen3-8B heads, e4m3, launch by launch beside v15: (1, 32k)
// 1.04-1.08x v15's speed at pages of 16 (v36's 2-3 us of tail on a ~25 us launch on an H100);
// (1, 128k) 1.01-1.03x. Refuted if (1, 32k) gains under 3%.
// Measured on an H100 (2026-12-07_4a5b44f_decode_v36_v37, one process): (1, 32k) 1.07x v15 by
// medians (the compact tail's and the dependent merge's gains together), 1.69x v36's throughput.
// Every shape it takes passes (2026-12-07_4a5b44f_decode_tail: 49 of the family's 63 e4m3
// problems, the others outside its D and page limits), memcheck, racecheck and synccheck clean;
// 1.07x v15 at (1, 32k) and 1.05x at (1, 128k) there.
// Requirements: v15's, never clustered (the counter path's plan at one-byte elements).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v37_fp8_dependent_merge() {
  return cluster_merge_variant_on<TmaRung{.elem = 1,
                                          .push = true,
                                          .stage_group = 2,
                                          .counter = kCounterCompactTail | kCounterDependentMerge}>(
      "v37_fp8_dependent_merge",
      "v36's dependent merge on the e4m3 cache: v15's stage pairs, v32's compact tail, the splits "
      "merged by a kernel launched programmatically; never clustered",
      [](const Problem& p) { return counted(dims_of(p), device_info().sm_count, 1); });
}

}  // namespace klab::decode_attention

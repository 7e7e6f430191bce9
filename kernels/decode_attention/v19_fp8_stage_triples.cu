// v19 fp8_stage_triples: v15 with each math warp taking its 16 keys of three stages at once.
// Why: v15's pairs gained 1.06x v14 at (64, 4k) and 1.04-1.09x at (16, 8k)
// (2026-12-05_382bde2_decode_v15_v18), as the source page of v14 predicted (the math warps'
// dependent chain, not DRAM, sets much of the pace), and left (16, 8k) at 81-82% of the read
// ceiling, 1.78x the bf16 rung (issue 15 asks 1.8x). Three CTAs an SM (v17, v18) lost: more warps
// do not pay where each CTA's ring gets shorter. Three stages at once lengthen the chain's
// independent part again on the same warps and ring: three S^T chains to interleave, one
// softmax's shuffles, vote and rescale for 48 keys (gqa_swap_ab.cuh's stage with kTiles = 3).
// What changes: kStageGroup = 3 in tma_pages_kernel (v15's loop, now over a group of any size;
// the last stages of a chunk alone when their count is not a multiple of three). The ring stays
// v14's six stages of 64 keys, two CTAs an SM: the consumer holds three, the producer fills the
// other three (48 KiB a CTA in flight, 96 KiB an SM, against pairs' 64 and 128).
// Expected bottleneck: DRAM at (256, 2k), where v14 already read 90%; elsewhere the consumers
// still, less so.
// Prediction (written before it ran), Qwen3-8B heads, e4m3, pages of 16, beside v15 and v14 in
// the same run, bf16 v13 and cuDNN paired at the same shapes: (16, 8k) 1.02-1.04x v15 (83-85%
// of the read ceiling, 1.82-1.85x bf16 v13), (64, 4k) 1.00-1.03x v15, (256, 2k) and the ragged
// batch within noise of v15. Refuted if (16, 8k) does not pass v15 by more than the noise; if
// it loses where pairs gained, the shorter lead of the producer (three stages) is the cost.
// Measured (2026-12-05_bbf18de_decode_v19): refuted, 0.99x v15 at (16, 8k); 1.03x with pages of 64.
// Requirements: v14's; 128 registers at D = 128 (v15: 125), within two CTAs an SM (204).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v19_fp8_stage_triples() {
  return cluster_merge_variant<TmaRung{.elem = 1, .push = true, .stage_group = 3}>(
      "v19_fp8_stage_triples",
      "v15 with each math warp taking its 16 keys of three stages at once: three independent S^T "
      "chains, one softmax's reductions for 48 keys");
}

}  // namespace klab::decode_attention

// v15 fp8_stage_pairs: v14 with each math warp taking its 16 keys of two stages at once.
// Why: on the e4m3 cache v14 (v09's kernel outside its clusters) reads 85.8% of the read ceiling
// at (64, 4k) and 79-82% at (16, 8k), where the bf16 rungs read 90-93%; issue 15 asks 1.8x the
// bf16 rung's throughput and these shapes stand at 1.77x and 1.71x (2026-12-04_bb65605). Nsight's
// source view at (64, 4k) (2026-12-04_aafb937_attention_v22): the math warps wait for a stage's
// data in 25% of the stall samples (v13 on bf16: 47%); the rest is their own work, a dependent
// chain of 273 instructions a warp and stage (bf16: 197; the e4m3 conversions add 66 F2FP, 34
// SHF and 16 PRMT) at two math warps a scheduler, `wait` (fixed-latency dependencies) its next
// stall: the consumers, not DRAM, set the pace for much of the time. Two stages at once give a
// warp two independent S^T chains to interleave and one softmax's shuffles, vote and rescale for
// 32 keys instead of 16 (gqa_swap_ab.cuh's stage with kTiles = 2); the ring and the plan are
// v14's (six stages of 64 keys, two CTAs an SM), the last stage of an odd count alone.
// Expected bottleneck: DRAM where the consumers stop being it; registers (two stages' scores and
// fragments) must stay within two CTAs an SM (204 a thread).
// Prediction (written before it ran), Qwen3-8B heads, e4m3, beside v14 in the same run: (64, 4k)
// and (256, 2k) 1.03-1.08x v14's speed (88-92% of the read ceiling), (16, 8k) 1.03-1.08x;
// B = 1 within noise of v14 (the fixed costs dominate there). Where a KV head has more than 8
// query rows (two n8 tiles: the pairs took 202 registers, one CTA an SM) and at D = 256 (the
// padded stage, no swap) v15 runs v14's kernel.
// Measured (2026-12-05_382bde2_decode_v15_v18): 1.04-1.09x v14, level at (256, 2k).
// Requirements: v14's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v15_fp8_stage_pairs() {
  return cluster_merge_variant<TmaRung{.elem = 1, .push = true, .stage_group = 2}>(
      "v15_fp8_stage_pairs",
      "v14 with each math warp taking its 16 keys of two stages at once: two independent S^T "
      "chains, one softmax's reductions for 32 keys");
}

}  // namespace klab::decode_attention

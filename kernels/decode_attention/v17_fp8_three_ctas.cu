// v17 fp8_three_ctas: v14 on e4m3 with the counter path's kernel on four stages a CTA instead of
// six, so three CTAs fit an SM instead of two.
// Where v14's e4m3 time goes at (64, 4k), where it reads 85.8% of the read ceiling (bf16's v13
// ~93%): Nsight's source page (2026-12-04_aafb937_attention_v22's run; the decode worklog's v15
// section) puts a third of the math warps' samples on the wait for a stage's data (v13's bf16
// kernel: half) and the rest on a dependent chain of 273 instructions a warp and stage (`wait`
// and short scoreboards), at two math warps a scheduler (two CTAs of four an SM). The consumers,
// not DRAM, set the pace much of the time: more warps to interleave is the plain remedy.
// What changes (TmaPagesConfig::stages' ring; plan_v13's counter_ring): where v14 merges through
// counters (every batched goal shape: (64, 4k), (256, 2k), the ragged batch), the kernel's ring
// holds four 16 KiB stages instead of six (69 KiB of dynamic shared memory), so three CTAs fit an SM by
// shared memory and by registers (120 a thread x 160 threads x 3 = 57.6K of the 64K): twelve
// math warps an SM, three a scheduler, with the same 192 KiB in flight an SM (3 x 4 stages
// against 2 x 6). The plan's wave model counts the 396 resident CTAs. The clustered kernel (B =
// 1, and (16, 8k)'s pairs where the plans still split in two) is v14's.
// Prediction (written before it ran), Qwen3-8B heads, e4m3, paired with v14, beside bf16 v13 and
// cuDNN in the same run: (64, 4k) and (256, 2k) 1.04-1.08x v14 (89-92% of the read ceiling;
// 1.84-1.9x bf16 v13), the ragged batch 1.02-1.06x; where v14's clustered kernel runs, v14's time.
// Refuted if (64, 4k) does not pass v14 by more than the noise.
// Measured (2026-12-05_382bde2_decode_v15_v18): refuted, 0.95-1.03x v14.
// Requirements: v14's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v17_fp8_three_ctas() {
  return cluster_merge_variant<TmaRung{.elem = 1, .push = true, .counter_ring = kThreeCtaRing}>(
      "v17_fp8_three_ctas",
      "v14 with the counter path's kernel on four 16 KiB stages instead of six: three CTAs an SM, "
      "twelve math warps, the same bytes in flight");
}

}  // namespace klab::decode_attention

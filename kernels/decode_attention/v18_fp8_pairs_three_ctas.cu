// v18 fp8_pairs_three_ctas: v15's stage pairs and v17's three CTAs an SM together on the e4m3
// cache. v15 shortens each math warp's chain a stage (two stages at once: two independent S^T
// chains, one softmax's fixed steps for 32 keys); v17 gives each scheduler three math warps
// instead of two (the counter path's ring of four 16 KiB stages). Both aim at the same
// diagnosis (the decode worklog's v15 section: v14's e4m3 consumers set the pace much of the
// time at (64, 4k)) by different means, so they may add. The pairs take 125 registers at one n8
// tile (v14: 120), still within three CTAs an SM (128 allocated x 160 threads x 3 = 61.4K of
// the 64K; the launch checks the residency once).
// Prediction (written before it ran), beside v14, v15 and v17 in the same run, e4m3, Qwen3-8B
// heads: (64, 4k) and (256, 2k) at least the better of v15 and v17 and up to their product
// (1.06-1.12x v14); where neither gains, v14's time.
// Measured (2026-12-05_382bde2_decode_v15_v18): v17's time, but 1.04x v14 on the ragged batch.
// Requirements: v14's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v18_fp8_pairs_three_ctas() {
  return cluster_merge_variant<TmaRung{
      .elem = 1, .push = true, .stage_group = 2, .counter_ring = kThreeCtaRing}>(
      "v18_fp8_pairs_three_ctas",
      "v15's stage pairs on v17's counter-path ring of four stages: two stages at once a math "
      "warp, three CTAs an SM");
}

}  // namespace klab::decode_attention

// v10 swap_ab: v09's swapped operands on the bf16 cache (v06's). At Qwen3-8B's group of 4, v06
// pads the rows to mma.sync's M = 16 as v08 did; gqa_swap_ab.cuh's bf16 stage makes the warp's
// 16 keys M and the rows one n8 tile (two above 8 rows): K's ldmatrix.x4 is S^T's A fragment as
// it is, V's ldmatrix.x4.trans is O^T's, Q's B fragments live in registers, P^T comes from the
// scores by movmatrix. Per warp and stage: 16 HMMA instead of 32, 8 ldmatrix instead of 24 (v06
// rereads Q's tile every stage), half the exponentials and rescales. Same CTA, ring, plan and
// merge as v06.
// Why bf16 too: v09 gained most where a CTA's math is on the critical path (+18-22% over v08 on
// the ragged batch's tail, +6-8% at B = 1), and v06 stands at 87-89% of the read ceiling on the
// ragged batch and at (1, 128k), under issue 15's 90%.
// Expected bottleneck: DRAM at the batched shapes (v06 already 96-99% there: no change), the
// ragged batch's tail and the fixed cost at B = 1.
// Prediction (written before it ran), Qwen3-8B heads, bf16, against v06 in the same run: the
// ragged batch 1.03-1.08x (to 90-94% of the read ceiling); (1, 4k) and (1, 32k) 1.02-1.06x;
// (1, 128k) and (16, 8k) 1.00-1.03x; (64, 4k) and (256, 2k) within 1%.
// Requirements: v06's. At D = 256 with more than 8 rows a KV head it runs v06's stage (two n8 tiles
// of 256 dims spill).
#include "kernels/decode_attention/tma_pages_kernel.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

Variant gpu_v10_swap_ab() {
  auto plan = [](const Problem& p) { return plan_v06(dims_of(p), device_info().sm_count); };
  return split_kv_variant(
      "v10_swap_ab",
      "v06 with v09's swapped operands on the bf16 cache: the warp's 16 keys as mma.sync's M, the "
      "KV head's query rows as n8 tiles, Q in registers, P^T by movmatrix",
      [plan](const Problem& p, Buffers& b) {
        return tma_pages_launch<TmaRung{.elem = 2, .swap_ab = true}>(p, b, plan(p));
      },
      plan, [](const Problem& p) { return tma_pages_limits("v10", dims_of(p)); }, /*min_sm*/ 90);
}

}  // namespace klab::decode_attention

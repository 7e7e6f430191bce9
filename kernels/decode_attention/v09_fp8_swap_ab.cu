// v09 fp8_swap_ab: v08 with the operands of both products swapped. v08 puts a KV head's query
// rows in mma.sync's M = 16: at Qwen3-8B's group of 4 (one new token), 12 of the 16 rows are
// padding, so three quarters of its tensor work, its score registers and its softmax
// instructions compute nothing. Its profile at (64, 4k) (2026-12-03_722a047_decode_v08_table_ahead:
// DRAM 75.9%, issue active 42.8%, stalls led by fixed-latency waits) says the math warps, two a
// scheduler, do not keep up with the stream; its SASS a warp and stage holds 32 HMMA, 16 LDSM
// (8 of them Q's, reread every stage), 68 F2FP and 74 FMUL.
// What changes (gqa_swap_ab.cuh): the warp's 16 keys are M, the rows N in n8 tiles (one at
// up to 8 rows a KV head, two above): S^T = K Q^T and O^T = V^T P^T, 16 HMMA a warp and stage
// instead of 32 at up to 8 rows; Q's fragments in registers for the whole chunk (no Q ldmatrix);
// half the exponentials and rescale multiplies; P^T's fragment from the scores by two movmatrix
// a stage; the accumulators 32 registers instead of 64. The FP8 conversions stay (one cvt per two
// elements of K and V). Same CTA, ring, split plan, merge and limits as v08.
// Expected bottleneck: DRAM at the batched shapes and long sequences, the fixed cost at (1, 4k).
// Prediction (written before it ran), Qwen3-8B heads (32 / 8, D = 128), e4m3, against v08 in
// the same run: (256, 2k), (64, 4k), (16, 8k) 88-94% of the read ceiling (v08 77-84%),
// 1.06-1.15x v08 and 1.8-1.95x v06 on bf16; (1, 128k) 1.1-1.2x v08; (1, 32k) 1.03-1.1x; (1, 4k)
// within 3% of v08 (its fixed cost dominates); the ragged batch 1.03-1.1x.
// Requirements: v08's. At D = 256 with more than 8 rows a KV head it runs v08's stage (two n8 tiles
// of 256 dims spill).
#include "kernels/decode_attention/tma_pages_kernel.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

Variant gpu_v09_fp8_swap_ab() {
  auto plan = [](const Problem& p) {
    return plan_v06(dims_of(p), device_info().sm_count, /*elem*/ 1);
  };
  return split_kv_variant(
      "v09_fp8_swap_ab",
      "v08 with the products' operands swapped: the warp's 16 keys as mma.sync's M and the KV "
      "head's query rows as n8 tiles (S^T = K Q^T, O^T = V^T P^T), Q in registers, P^T by "
      "movmatrix: half the mma and softmax work at up to 8 rows a KV head",
      [plan](const Problem& p, Buffers& b) {
        return tma_pages_launch<TmaRung{.elem = 1, .swap_ab = true}>(p, b, plan(p));
      },
      plan, [](const Problem& p) { return tma_pages_limits("v09", dims_of(p), /*elem*/ 1); },
      /*min_sm*/ 90, DType::e4m3);
}

}  // namespace klab::decode_attention

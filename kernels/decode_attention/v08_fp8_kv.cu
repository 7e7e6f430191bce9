// v08 fp8_kv: v06 on an e4m3 KV cache, the serving form that halves the bytes decode reads.
// The cache holds e4m3 K and V with one fp32 scale per KV head each (k_scale, v_scale: the
// cache's value is e4m3 x scale, as vLLM's and FlashInfer's per-tensor scales, one per head
// here); q and o stay bf16. Same CTA, ring, split plan and in-launch merge as v06
// (tma_pages_kernel.cuh with kElem = 1); what changes:
// (1) TMA boxes of min(P, 64) rows x 128 e4m3 columns (one box a page and tensor at D = 128,
//     where bf16 takes two), into 16 KiB stages, six of them at D = 128 (v06's 96 KiB a CTA in
//     flight, two CTAs an SM).
// (2) The math warps turn the FP8 tiles into f16 operands in registers, with no FP8 ldmatrix on
//     Hopper: gqa_mma_e4m3.cuh permutes the head dimension of Q (for K) and of O (for V) instead
//     of moving bytes between threads. One ldmatrix.x4 per 32 dims of K or V (bf16: two), one
//     cvt.rn.f16x2.e4m3x2 per two elements, a byte permute per four of V.
// (3) Q's tile in f16 (exact for |q| in f16's normal range), P in f16, mma.sync with f16 inputs;
//     K's scale folded into the scores' scale, V's into the output, per KV head.
// Expected bottleneck: DRAM, as v06's, at half the bytes a key; the conversions add ~80 ALU
// instructions a warp a stage, a fifth of an SM's issue at the read ceiling.
// Prediction (written before it ran), Qwen3-8B heads (32 / 8, D = 128), against v06 on bf16 at the
// same (B, L) in the same run: (256, 2k), (64, 4k), (16, 8k) 1.75-1.9x v06's throughput (the
// same ~13 us fixed cost over half the stream), 85-95% of the read ceiling in FP8 bytes; (1, 128k)
// 1.7-1.85x; (1, 32k) 1.4-1.6x; (1, 4k) 1.0-1.15x (the fixed cost is most of it).
// Requirements: v06's (pages a power of two from 8 tokens, grid limits), sm_90, D = 128 or 256
// (rows of whole 128-byte swizzle blocks: D = 64 is half of one), |q| below 65504 (f16).
#include "kernels/decode_attention/tma_pages_kernel.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

Variant gpu_v08_fp8_kv() {
  auto plan = [](const Problem& p) {
    return plan_v06(dims_of(p), device_info().sm_count, /*elem*/ 1);
  };
  return split_kv_variant(
      "v08_fp8_kv",
      "v06 on an e4m3 KV cache with per-head scales: TMA boxes of FP8 pages, K and V turned into "
      "f16 mma.sync operands in registers (Q's and O's head dimension permuted to the FP8 "
      "fragments), half the bytes a key",
      [plan](const Problem& p, Buffers& b) {
        return tma_pages_launch<TmaRung{.elem = 1}>(p, b, plan(p));
      },
      plan, [](const Problem& p) { return tma_pages_limits("v08", dims_of(p), /*elem*/ 1); },
      /*min_sm*/ 90, DType::e4m3);
}

}  // namespace klab::decode_attention

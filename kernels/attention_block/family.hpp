#pragma once
// The attention_block family: one decoder layer's attention block at decode (issue 15, item 6),
// built from the other families' rungs, so that the fused kernels are timed where they serve:
//   1. norm        h = bf16(x + residual) (the new residual stream), y = bf16(RMSNorm(h) * w)
//   2. QKV GEMM    qkv = y @ w_qkv                                   hgemm (M = B tokens)
//   3. QK-norm     q_out, and the new token's k and v into the paged cache
//                  (RMSNorm of q and k heads, rotary at position L - 1)  qk_norm_rope_cache
//   4. attention   o = softmax(q K^T / sqrt(D)) V over the L keys       decode_attention
//   5. o proj      out = o @ w_o                                     hgemm
// One new token per sequence (B sequences; sequence b's context L_b holds it as its last token).
// A rung picks the form of each step; the GEMM and attention rungs are the same in every GPU rung
// (hgemm.v18_wgmma_dispatch, decode_attention.v11_cluster_merge), so the rungs differ by the
// fused kernels alone (and by how the block is launched).
//
// Tensors (row-major):
//   x            (B, H)                 bf16: the previous block's output
//   residual     (B, H)                 bf16: the residual stream
//   norm_weight  (H)                    bf16: the input RMSNorm's gain
//   w_qkv        (H, (Hq + 2 Hkv) D)    bf16: the QKV projection (C = A @ B, as hgemm's B), drawn
//                                       N(0, 1) / ~sqrt(H) (build_weight)
//   q_weight     (D), k_weight (D)      bf16: Qwen3's q_norm and k_norm gains
//   w_o          (Hq D, H)              bf16: the output projection, N(0, 1) / ~sqrt(Hq D)
//   seq_lens     (B)                    i32: L_b, the new token included (decode_attention's)
//   block_table  (B, ceil(len / P))     i32: decode_attention's
//   positions    (B)                    i32: L_b - 1, the new token's position
//   slot_mapping (B)                    i64: its cache slot, block_table[b][(L_b - 1) / P] P + ..
//   k_cache, v_cache (pages, Hkv, P, D) bf16: decode_attention's HND pool. Read, and written at
//                the new tokens' slots, which the inputs fill with kStaleBits (a block that does
//                not write them attends to 2^14s and fails its check)
//   residual_out (B, H)                 bf16: h
//   qkv          (B, (Hq + 2 Hkv) D)    bf16: the projection
//   o            (B, Hq, D)             bf16: the attention output
//   out          (B, H)                 bf16: the block's output
// y, q_out and the log-sum-exp live in the rung's workspace: a served layer keeps them nowhere.
#include <cstdint>
#include <vector>

#include "kernels/decode_attention/family.hpp"
#include "kernels/qk_norm_rope_cache/family.hpp"
#include "klab/harness/family.hpp"

namespace klab::attention_block {

inline constexpr double kEps = 1e-6;
/// bf16 2^14: what the pools hold at the new tokens' slots before a run.
inline constexpr uint16_t kStaleBits = 0x4680;

/// A problem's dimensions, read once from its shape.
struct Dims {
  int64_t b = 0;        ///< sequences, one new token each
  int64_t len = 0;      ///< the longest context, the new token included
  int64_t min_len = 0;  ///< the shortest (0: len); lengths spread as decode_attention's
  int64_t page = 16;    ///< P: tokens per cache page
  int64_t hidden = 4096, hq = 32, hkv = 8, d = 128;  ///< Qwen3-8B unless given

  int64_t qkv_cols() const { return (hq + 2 * hkv) * d; }
  int64_t attn_cols() const { return hq * d; }
  /// The steps' problems.
  decode_attention::Dims attention() const;
  qk_norm_rope_cache::Dims qk() const;
  Problem qkv_gemm() const;
  Problem o_gemm() const;
};

Dims dims_of(const Problem& p);
Problem problem(const Dims& s);

/// The inputs the family builds (TensorSpec::build), exposed for the tests.
/// positions = seq_lens - 1, and slot_mapping the slot of that position.
void build_positions(const Tensor& seq_lens, Tensor& positions);
void build_slot_mapping(const Dims& s, const Tensor& seq_lens, const Tensor& block_table,
                        Tensor& slots);
/// A projection's weight of k rows: N(0, 1) draws times 2^-round(log2(sqrt(k))), so that the
/// projections keep the activations' scale, as a trained layer's do (the new token's v is then
/// as large as the pool's, and attention, not one value, decides the output).
void build_weight(int64_t k, Tensor& w, uint64_t seed);
/// A pool: N(0, 1) draws, kStaleBits at the new tokens' slots.
void build_pool(const Dims& s, const Tensor& slots, Tensor& pool, uint64_t seed);

/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 2e9;

Family make_attention_block();

// One factory per rung, each in its own file (cpu.cpp, baseline_unfused.cu, vNN_*.cu).
Variant cpu_v00();
Variant gpu_baseline_unfused();
Variant gpu_v01_fused();
Variant gpu_v02_fused_graph();
Variant gpu_v03_fused_pdl_graph();

}  // namespace klab::attention_block

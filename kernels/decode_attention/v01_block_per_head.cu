// v01 block_per_head: one block per query row (sequence, new token, query head), as vLLM's first
// paged-attention kernel. The block's four warps take the row's visible tokens in turn (token j to
// warp j % 4); for each, the warp looks the token's page up in the block table, reads its K row
// (lane i holds elements i, i + 32, ... of D), reduces q . k across the warp with shuffles, folds
// the score into its online softmax state (klab/device/online_softmax.cuh) and its fp32
// accumulator rescaled by the same factor, then reads the V row into the accumulator. At the end
// the four warps' (max, sum) states merge through shared memory, o = acc / sum and
// lse = max + log(sum). A row without keys (an empty slot, a speculative token before the
// sequence's first) writes o = 0 and lse = -inf, never 0 / 0.
// Adds: nothing: the first correct GPU rung, the baseline the split-KV, grouped-query and
// pipelined rungs are measured against. Plain CUDA, fp32 scores and accumulation, P never
// rounded.
// Expected bottleneck: memory latency, not bandwidth. Each warp walks its tokens one at a time:
// a dependent chain of a block-table load, then the K and V rows (two 2 D-byte loads), a
// five-step shuffle reduction and two exps per token, so a warp keeps at most about one token's
// rows in flight. The Hq / Hkv query heads of a KV head each read the same K/V rows in their own
// blocks (hits in L2 when they run together, DRAM traffic when they do not). Only B * Qlen * Hq
// blocks exist: 32 at B = 1 for Qwen3-8B's heads, a quarter of the H200's SMs with four warps
// each.
// Prediction (written before it ran): at B = 1 a few percent of the read ceiling (32 blocks, one
// outstanding token per warp: latency-bound, L = 4k far above 10 us); at (256, 2k) and (64, 4k),
// with every SM full (16 blocks of 128 threads), a few tens of percent of the read ceiling, below
// cuDNN's paged SDPA at every headline shape. Page size should not matter beyond the table loads
// (one per token here, cached in L1).
// Requirements: D = 64, 128 or 256; B * Qlen * Hq < 2^31 (one block each, grid x); the HND page
// layout of family.hpp; block table entries valid for every token below the sequence's length
// (entries past it are never read).
// The kernel is block_per_row.cuh's, launched with one split: v02 runs the same kernel over
// splits of the keys.
#include <climits>

#include "kernels/decode_attention/block_per_row.cuh"

namespace klab::decode_attention {

namespace {

// One split: a chunk longer than any sequence (block_per_row.cuh; v02 splits).
constexpr SplitKvPlan kOneSplit{INT64_MAX / 2, 1};

}  // namespace

Variant gpu_v01_block_per_head() {
  return split_kv_variant(
      "v01_block_per_head",
      "one block per (sequence, token, query head): its warps walk the pages, online softmax, "
      "fp32",
      [](const Problem& p, Buffers& b) { return row_launch(p, b, kOneSplit); },
      [](const Problem&) { return kOneSplit; },
      [](const Problem& p) {
        if (dims_of(p).rows() > INT_MAX)
          return Status::no("decode_attention.v01: b * qlen * hq above 2^31");
        return Status::yes();
      });
}

}  // namespace klab::decode_attention

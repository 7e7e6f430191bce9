// v07 head parts: v03's kernel with each token's row split over three blocks of 128 threads.
// Adds over v03: built traffic-only, v03's own data path (a 12 KiB row at a time handed to a
// block of twelve warps, a barrier a token, three blocks an SM) reaches 89.4% of copy at 16384
// tokens where CUB's copy of the same bytes reaches 94.9% (2026-12-03_bd7108f_qk_traffic); klab's
// own bulk-copy map (relu v05: 8 KiB tiles into blocks of eight warps, about seven blocks an SM)
// 92.7%. Here the data path takes relu v05's shape: block b takes part b % 3 of its tokens'
// rows (16 of Qwen3-8B's 48 heads, 4 KiB: q heads 0-15, q heads 16-31, or the k and v heads),
// so a barrier joins four warps, not twelve, and about eight blocks an SM keep three 4 KiB rows
// each in flight. The price: every part computes its tokens' rope tables (three times a token
// at Qwen3-8B, once in v03; a part of v heads alone, at other head counts, computes one it does
// not read).
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v03, the launch
// and one token's chain (three blocks a token instead of one).
// Prediction (written before it ran): 16384 tokens 87.3% -> 89-92% of copy; 4096 tokens 83.3% ->
// 84-88%; 1 and 16 tokens within 5% of v03.
// Measured (2026-12-03_25baf7e_qk_v07_fixed): 85.3% / 75.8% of copy at 16384 / 4096 tokens
// against v03's 87.1% / 83.7% in the same call; in two parts of 24 heads (192 threads, five
// blocks an SM) 87.5% / 77.1% (v03 87.0% / 83.5%); 1.91x, 1.97x and 1.90x the unfused launches at
// 1, 16 and 64 tokens. Refuted as a rung; its data path, built traffic-only, moves the bytes at
// 91.4% of copy at 16384 tokens against v03's 89.9% (2026-12-03_68db206_qk_v07_head_parts): the
// three rope tables a token and the fillers' place among head warps take back more than the
// path gains (docs/worklogs/fused.md).
// Requirements: v03's (hoisted.cuh, token_ring.cuh: four rows of a part in shared memory), for
// the heads of a part; no part empty (at least 2 x ceil(heads / 3) + 1 heads).
#include "kernels/qk_norm_rope_cache/hoisted.cuh"

namespace klab::qk_norm_rope_cache {

Variant gpu_v07_head_parts() {
  return hoisted::variant</*kTokens=*/1, /*kStages=*/4, /*kSmallBlocks=*/8, /*kParts=*/3,
                          /*kSmall=*/128>(
      "v07_head_parts",
      "v03's kernel with each token's row split over three blocks of 128 threads (a third of the "
      "heads each), about eight blocks an SM");
}

}  // namespace klab::qk_norm_rope_cache

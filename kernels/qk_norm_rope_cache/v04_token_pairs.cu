// v04 token pairs: v03's kernel (hoisted.cuh) with two tokens between barriers instead of one.
// Adds over v03: at 16384 tokens v03's top stall is the block's barrier (5.05 cycles per issued
// instruction in 2026-12-03_0a2a2ec's profile, long_scoreboard 2.26 after the ring's third row):
// each token ends with every warp waiting for the slowest. Here a thread normalises, rotates and
// stores its head for two tokens (rows in stages j and j + 1) before the barrier, and the fillers
// fill the next pair's two tables: one barrier a pair, and two independent chains a warp.
// The ring is four rows deep (two being read, two in flight), the tables and offsets one a
// stage; at three blocks an SM the rows take 3 x 49 KiB of shared memory.
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens (one token a
// block), as v03.
// Prediction (written before it ran): 16384 tokens 87.4% -> 89-92% of copy, 4096 tokens 83.8% ->
// 82-85% (a block's ~10 tokens are five pairs: the ramp weighs more); 1, 16 and 64 tokens as v03.
// Measured (2026-12-03_3cec2d7): at three blocks an SM ptxas spilled 44 bytes (72.5% / 64.4% of
// copy); at two (80 registers, kept) 87.1% at 16384 tokens, level with v03's 86.8% in the same
// call, and 79.6% at 4096 against v03's 83.7%: refuted (docs/worklogs/fused.md).
// Requirements: v03's (hoisted.cuh, token_ring.cuh: four rows in shared memory).
#include "kernels/qk_norm_rope_cache/hoisted.cuh"

namespace klab::qk_norm_rope_cache {

Variant gpu_v04_token_pairs() {
  return hoisted::variant</*kTokens=*/2, /*kStages=*/4, /*kSmallBlocks=*/2>(
      "v04_token_pairs", "v03 with two tokens between barriers (a ring of four rows)");
}

}  // namespace klab::qk_norm_rope_cache

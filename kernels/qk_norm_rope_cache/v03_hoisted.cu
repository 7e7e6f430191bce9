// v03 hoisted: v02's token ring with what does not change from one token to the next taken out of
// the token loop, and what one thread can do for the block done once.
// Adds over v02: the profile of v02 at 16384 tokens (2026-12-02_a55f38f) put it near the issue
// limit (74.6% issue active against DRAM 69.9% busy; not_selected 22% of the stalls), and its
// SASS spends ~640 instructions a thread a token where a head's norm, rotation and stores need
// ~160. Here, each thread keeps the same head every token (one pass: Hq + 2 Hkv groups fit the
// block), and
//  - the filler thread of rope pair i computes f_i / pi (an fp64 exp2 and a division) once
//    (rope.hpp: rope_per_position); a token's table costs one product, the reduction and sincospif
//    a pair;
//  - one thread computes the next token's pool offset (a 64-bit division by the page size, here
//    in 32 bits) into shared memory beside its table, where v02 had every thread divide;
//  - v heads go from the ring to the v pool as raw 16-byte vectors (v02 unpacked and repacked
//    them), and only the filler threads load the next position, only one thread the next slot;
//  - the fillers, the slot's reader and the ring's copies are the block's last threads: at
//    Qwen3-8B the two warps of v heads, the lightest of a token (v02: the first threads, q heads).
// The one barrier a token is v02's; the ring (token_ring.cuh) is three rows deep (v02: two), a
// rope table and pool offset beside each row. The kernel is hoisted.cuh's, at one token a barrier
// (v04 takes two). Three blocks an SM (56 registers): the hoisted offsets held in registers.
// Measured and set aside (the worklog): four blocks at 40 registers with them spilled to local memory (77.1% of copy at 16384 tokens),
// and four blocks with them recomputed each token from a re-read %tid.x (85.1%, against this
// form's 87.4% in the same run). The norm weights sit in shared memory as fp32, filled once a
// block (v02: two loads from L1 and 16 conversions a head and token; held in registers across
// tokens they spilled more than they saved).
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v02, the launch
// and one token's chain.
// Prediction (written before it ran): 16384 tokens 85.0% -> 89-93% of copy, 4096 tokens 75.7% ->
// 79-84% (the first copies of a block's ~8 tokens stay exposed); 1 and 16 tokens within 3% of
// v02. Measured (2026-12-03_0a2a2ec): 87.4% and 83.8% of copy (v02 84.9% and 76.1%), 2.09x and
// 2.18x the unfused launches at 1 and 16 tokens; as hoisted.cuh's kernel (2026-12-03_3cec2d7):
// 86.8% and 83.7%. The per-token barrier is its top stall (docs/worklogs/fused.md).
// e4m3 pools (issue 15's FP8 cache write): the same kernel's kE4m3 instantiation, k and v times
// their head's 1 / scale (one reciprocal a thread, at the start) and rounded to e4m3 by
// cvt.rn.satfinite, stored 8 bytes a half (v heads unpacked from the ring instead of copied
// raw). At the 56-register bound of three blocks an SM it spills 8 bytes (ptxas): two values
// stored before the token loop and reloaded from L1 each token (two LDL among ~200
// instructions a token), where the bf16 instantiation spills none.
// Prediction (written before it ran): at 16384 tokens within 3 points of the bf16 pools' share of
// the copy ceiling (the counted bytes shrink with the pools': 22 of 24 KiB a Qwen3-8B token), so
// 0.90-0.96x their time; at 1 and 16 tokens level with bf16; the unfused baseline's cache launch
// gains alike, so the speed-ups over it stay within 5% of bf16's.
// Measured on an H100 (2026-12-06_c1e6cdd_qk_e4m3_contig_v31; docs/worklogs/fused.md): 89.7% of
// copy at 16384 tokens against bf16's 91.8%, 0.94x its time (holds); at 1 and 16 tokens 0.91x and
// 0.94x bf16's speed and 1.98x / 1.995x the unfused launches against bf16's 2.15x / 2.19x
// (refuted: the scales' loads and the spill's reloads join a one-token launch's chain).
// Requirements: those of rung.cuh and token_ring.cuh; sm_90; every head and every rope pair in one
// pass: max(Hq + 2 Hkv groups, D / 2) threads, at most 1024; a pool of fewer than 2^31 slots.
#include "kernels/qk_norm_rope_cache/hoisted.cuh"

namespace klab::qk_norm_rope_cache {

Variant gpu_v03_hoisted() {
  return hoisted::variant</*kTokens=*/1, /*kStages=*/3, /*kSmallBlocks=*/3, /*kParts=*/1,
                          hoisted::kSmallThreads, /*kWithE4m3=*/true>(
      "v03_hoisted",
      "v02's token ring with a head per thread every token: the rope frequencies once per pair, "
      "the next token's pool offset once, by one thread");
}

}  // namespace klab::qk_norm_rope_cache

// v19 fa3_trimmed_diagonal: v16 (one tile a block, FA3's TMA epilogue) with the causal diagonal's
// key block trimmed for the consumer warpgroup whose rows see only its first half. At Nq = Nkv
// with 128-row tiles and 128-key blocks, the tile's first 64 rows see keys 0 .. 63 of the
// diagonal block at most: their S is computed by m64n64 wgmmas instead of m64n128, and their
// P V over the block's first 64 keys (four k-steps instead of eight); the second half's scores
// are set to -inf, so its weights are 0 as the mask would have made them: the same result
// (fa3_tile.hpp's first_half_only, CPU-tested; fa3_overlap.cuh's kTrimDiagonal).
// Why: at causal 4k a tile visits 16.5 key blocks on average, one of them the diagonal, half of
// whose products the mask throws away. Trimming the first warpgroup's half of it removes a
// quarter of the diagonal block's tensor work: 1 / 66 of all of it at 4k (1 / 130 at 8k).
// Prediction (written before it ran): causal 4k +0.7-1.5% over v16 paired with cuDNN (0.995x to
// 1.002-1.010x), 8k +0.3-0.8%, 16k and 32k within noise of v16; non-causal unchanged (the
// condition never holds where every key block is whole).
// Requirements: v16's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v19";

}  // namespace

Variant gpu_v19_fa3_trimmed_diagonal() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ true, /*no line: v16's order*/ 0, kName>(
      "attention.v19_fa3_trimmed_diagonal",
      "v16 with the causal diagonal's key block trimmed to its first half for the consumer "
      "warpgroup whose rows see no key in the second");
}

}  // namespace klab::attention

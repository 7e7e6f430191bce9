// v16 fa3_tma_epilogue: v07 (v05's overlapped loop with FlashAttention 4's conditional rescale,
// one tile a block) with FlashAttention 3's epilogue: each consumer warpgroup rounds O / l into
// its own 64 rows of the block's Q tile (which only its own S products read, all done by then),
// in the 128-byte swizzled panels the TMA brought Q in (fa3_tile.hpp's o_stage_offset,
// conflict-free and checked on the CPU), and one thread stores them by TMA, one 64-row box a
// panel (fa3_kernel.cuh's store_rows_tma; the kernel is fa3_tma_epilogue.cuh's, shared with v19-v21).
// Why: at causal 4k, the one D = 128 causal headline shape where v07 does not hold 1.00x cuDNN by
// median, Nsight (2026-12-03_262879f_attention_v13) showed v07's O stores at 7.60 sectors a
// request (kD / 2 4-byte stores a thread from the accumulators' layout) and 1.56x cuDNN's L2
// write sectors; a tile's epilogue runs with the warpgroup off the tensor pipe, and the shorter
// the tiles (16.5 key blocks on average at 4k) the more it weighs.
// Prediction: see the worklog.
// Requirements: v07's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v16";

}  // namespace

Variant gpu_v16_fa3_tma_epilogue() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ false, /*no line: v16's order*/ 0, kName>(
      "attention.v16_fa3_tma_epilogue",
      "v07 with FA3's epilogue: O rounded into each consumer warpgroup's rows of Q's tile and "
      "stored by TMA, one 64-row box a panel");
}

}  // namespace klab::attention

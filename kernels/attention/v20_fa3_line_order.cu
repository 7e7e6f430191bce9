// v20 fa3_line_order: v16 (one tile a block, FA3's TMA epilogue) with its causal blocks taken in
// the persistent rungs' line order (fa3_schedule.hpp's TileLine): a block's linear index in the
// grid, x fastest, the order the hardware dispatches blocks in, is its place on a line cut into
// sections of (batch, head) pairs whose K and V fit half the L2; inside a section the longest
// query tiles of all its pairs go first. v16 orders each pair's tiles longest first, but pair
// after pair: the last wave then still holds the longest tiles of the last pairs, started while
// other SMs run out of work. On the line, the last blocks dispatched are the shortest tiles of
// the last section (longest processing time first, left to the block scheduler: no persistent
// loop, no tile counter, v16's kernel otherwise). Non-causal problems, whose tiles are all
// alike, run v16's order.
// Why: the persistent rungs took this order with an atomic tile counter (v06, v15) and gained
// about 1% at causal 4k over their one-tile forms, but paid for the loop elsewhere (v17's
// spills, v18's Q wait); v16's one-tile kernel has neither cost.
// Prediction (written before it ran): a greedy model of 132 SMs taking tiles of 1-32 key blocks
// (each ±10%, 1.5 blocks of fixed cost) puts v16's order 1.7% above the work's lower bound at
// causal 4k and 1.6% at 8k, sections of 8-16 pairs 0.3%: causal 4k +0.7-1.4% over v16 paired
// with cuDNN (0.995x to 1.002-1.009x), 8k +0.5-1.2%, 16k +0.3-0.8%; non-causal as v16.
// Requirements: v16's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v20";

}  // namespace

Variant gpu_v20_fa3_line_order() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ false, /*the line in half the L2*/ 2,
                                   kName>(
      "attention.v20_fa3_line_order",
      "v16 with causal blocks in the persistent rungs' line order: sections of (batch, head) "
      "pairs whose K and V fit half the L2, each section's longest tiles first");
}

}  // namespace klab::attention

// v26 fa3_max_free_line_order: v25 (v16's kernel and TMA epilogue with v24's softmax: an unmasked
// block's terms against the running max at once, the rows' sums checked instead of the block's
// max) with v20's order of the causal blocks: a block's grid index is its place on a line of
// sections of (batch, head) pairs whose K and V fit half the L2, each section's longest tiles
// first (fa3_schedule.hpp's TileLine). Non-causal problems run v25 as it is.
// Why: the two changes act on different things, v25 on each round's chain (the softmax), v20 on
// the last wave's tail and the L2's reuse of K and V; each was measured alone on v16's kernel.
// Prediction (written before it ran): the gains add: causal 8k and 16k +0.5-1.5% over v25 paired
// with cuDNN (v20 took +1.1% at 8k and about +1% at 16k over v16), causal 4k within 1% of v25
// (v20 lost 0.5% there); non-causal as v25.
// Requirements: v16's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v26";

}  // namespace

Variant gpu_v26_fa3_max_free_line_order() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ false, /*the line in half the L2*/ 2,
                                   kName, fa3::SoftmaxOptions<0, true, 0, /*max-free*/ true>>(
      "attention.v26_fa3_max_free_line_order",
      "v25 with v20's order of the causal blocks: sections of (batch, head) pairs whose K and V "
      "fit half the L2, each section's longest tiles first");
}

}  // namespace klab::attention

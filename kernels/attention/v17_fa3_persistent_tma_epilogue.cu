// v17 fa3_persistent_tma_epilogue: v15 (v06's persistent kernel with v07's softmax) with v16's
// epilogue: each consumer warpgroup rounds O / l into its own 64 rows of Q's tile and one thread
// stores them by TMA; Q is handed back to the producer once the store has read them, not after
// the tile's last S as in v06 and v15, and in exchange the producer puts the next tile's first
// kStages steps of K and V into the ring before it waits for Q (fa3_persistent.cuh, kEarlyKv).
// Why: paired launch by launch with cuDNN at causal 4k (2026-12-04_c6ccbfb), v07 reads 0.979x,
// v15's persistence 0.989x and v16's epilogue 0.995x: the two remove different fixed costs of a
// tile (the block's start and the next tile's first loads; O's 4-byte stores), and 4k, at 16.5
// key blocks a tile, is where fixed costs weigh.
// Prediction (written before it ran), causal D = 128 bf16 H = 32, paired with cuDNN: 4k
// 1.000-1.010x (+0.5-1.5% over v16): v15's gain less the next Q's load, now behind the
// epilogue; 8k-32k within 1% of v16. Refuted at 4k if not above v16.
// After 2026-12-04_bb65605's profile: the epilogue's staging offsets, hoisted out of the tile
// loop and spilled, are computed per tile (fa3_kernel.cuh, store_rows_tma): causal 4k
// 0.975-0.976x cuDNN paired (2026-12-04_85143d7_attention_v17_v18_unspilled).
// Requirements: v06's.
#include "kernels/attention/fa3_persistent.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V17Name {
  static constexpr const char* kName = "attention.v17";
};
}  // namespace

Variant gpu_v17_fa3_persistent_tma_epilogue() {
  return fa3::persistent_variant<V17Name, fa3::SoftmaxOptions<0, true>, /*TMA store of O*/ true>(
      "attention.v17_fa3_persistent_tma_epilogue",
      "v15 (persistent, v07's softmax) with v16's epilogue: O through each consumer warpgroup's "
      "rows of Q and a TMA store, Q handed back after it, the next tile's first K/V steps loaded "
      "before the wait for Q");
}

}  // namespace klab::attention

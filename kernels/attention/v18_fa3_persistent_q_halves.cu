// v18 fa3_persistent_q_halves: v17 with Q loaded and handed back by halves, one a consumer
// warpgroup: each warpgroup's 64 rows of Q have their own full and empty barriers and their own
// tile word, and the producer reloads a warpgroup's half as soon as that warpgroup's TMA store of
// O has read its rows (fa3_persistent.cuh, kQHalves; Q's half-tile map of 64-row boxes).
// Why: v17 (v16's epilogue in v15's persistent kernel) lost 5.4-5.7% to v15 at causal 4k and
// 4.3% at 16k (2026-12-04_0998a5a_attention_v17): with one empty_q for both warpgroups, the
// warpgroup ahead in the ping-pong waits at every tile for the other's last P V and epilogue, and
// then for the next Q's whole load, where v15 had both under its last P V. By halves, the
// warpgroup ahead waits only for its own store and its own 64 rows.
// Prediction (written before it ran), causal D = 128 bf16 H = 32, paired with cuDNN: 4k
// 1.000-1.010x (v16 0.994-0.997x, v15 0.986-0.989x): v15's persistence and v16's epilogue
// together; 8k-32k within 1% of v16 or above. Refuted at 4k if not above v16.
// Measured (2026-12-04_90f7f42_attention_v18): causal 4k 0.945x cuDNN paired, twice (v17
// 0.932-0.934x, v16 0.995-0.996x); 8k 0.973x, 16k 0.987x, non-causal 8k 0.958x: 0.4-1.2% over
// v17, 4-6% under v16. Refuted: the wait for the other warpgroup's epilogue is not v17's loss.
// After 2026-12-04_bb65605's profile: the epilogue's staging offsets, hoisted out of the tile
// loop and spilled, are computed per tile (fa3_kernel.cuh, store_rows_tma): causal 4k
// 0.981-0.982x cuDNN paired (2026-12-04_85143d7_attention_v17_v18_unspilled).
// Then (after the unspilled run): the next tile's Q prefetched into L2 (a TMA prefetch of both
// halves' boxes) when the producer puts that tile's first K/V steps into the ring, a few key
// blocks before each half's rows come back, so its reload reads L2. Prediction (written before it
// ran): causal 4k from 0.982x to 0.990-1.000x cuDNN paired; 8k-32k +0.5% or level.
// Measured (2026-12-04_c3bc6ca_attention_v18_q_prefetch): 0.995x at causal 4k twice (v16 0.995x
// and 0.997x), 1.025x at 8k, 1.036x at 16k: level with v16 at 4k, not above it.
// Requirements: v06's.
#include "kernels/attention/fa3_persistent.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V18Name {
  static constexpr const char* kName = "attention.v18";
};
}  // namespace

Variant gpu_v18_fa3_persistent_q_halves() {
  return fa3::persistent_variant<V18Name, fa3::SoftmaxOptions<0, true>, /*TMA store of O*/ true,
                                 /*Q by halves*/ true>(
      "attention.v18_fa3_persistent_q_halves",
      "v17 with Q loaded and handed back by halves: each consumer warpgroup's 64 rows reloaded "
      "once its own TMA store of O has read them, with their own barriers and tile word");
}

}  // namespace klab::attention

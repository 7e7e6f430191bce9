// v15 fa3_persistent_lazy: v06's persistent kernel (fa3_persistent.cuh) with v07's softmax
// (FlashAttention 4's conditional rescaling), for the short causal tiles where a block's own
// start and end weigh most.
// Why: at causal N = 4k (16.5 key blocks a tile on average) v07, one tile a block, stays at
// 0.95-0.96x cuDNN by median (2a751b2's status run) while it reaches 1.05-1.07x at 16k and 32k;
// a tile's fixed costs (the block's launch and barrier setup, Q's and the first K block's load
// latency with nothing else on the SM, which holds one block, the epilogue and last P V with the
// tensor pipe half idle) are a quarter as heavy against 4x longer tiles. cuDNN's kernel at 4k is
// persistent (a grid of 132 blocks, 2026-12-03 Nsight: 1790 us against v07's 1814 under the
// profiler). v06 hides those costs (the next tile's Q and K load under the last P V, the
// ping-pong across tiles) but runs v05's exact rescale: 0.92-0.94x at 4k, v07's softmax gave
// v05 +2% there.
// Prediction (written before it ran), causal D = 128 bf16 H = 32: N = 4k 1.00-1.04x cuDNN in the
// same call (+2-5% over v07); 8k within 2% of v07; 16k and 32k below v07 as v06 is below v05
// there (the L2 sections). Refuted at 4k if below v07.
// Requirements: v06's.
#include "kernels/attention/fa3_persistent.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V15Name {
  static constexpr const char* kName = "attention.v15";
};
}  // namespace

Variant gpu_v15_fa3_persistent_lazy() {
  return fa3::persistent_variant<V15Name, fa3::SoftmaxOptions<0, true>>(
      "attention.v15_fa3_persistent_lazy",
      "v06 (persistent, heaviest tiles first, the next tile's loads under the last P V) with "
      "v07's softmax: O and the row sums rescaled only when a row's max grows past 2^8");
}

}  // namespace klab::attention

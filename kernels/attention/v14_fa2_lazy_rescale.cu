// v14 fa2_lazy_rescale: v13 (FlashAttention 2's tile shape on mma.sync) with FlashAttention 4's
// conditional rescaling, v07's idea on the FA2 rung: a warp keeps its rows' running max, and O and
// the row sums unscaled, until some row's max grows by more than 2^8 (kLazyRescaleLog2); a vote
// (__any_sync) makes the skipped rescale a uniform branch. The final O / l is exact either way.
// Why it should matter more here than on wgmma (v07: 0-3% at D = 128): on mma.sync nothing
// overlaps the softmax with the tensor pipe, and each key block's rescale (kRowTiles x kD / 2
// FMULs a thread: 128 at D = 128, against 256 MMAs a warp) sits between S's softmax and the
// first P V MMA that accumulates into the rescaled O. v13's profile: the tensor pipe 55% busy,
// issue 45% active, the top stall `wait` (fixed-latency dependencies, 38%).
// Prediction (written before it ran), causal D = 128 bf16 H = 32, 8k and 16k: +2-6% over v13 in
// the same run (345-360 TFLOP/s, 1.00-1.05x PyTorch's flash back end); non-causal 8k +2-6%;
// D = 64 +3-8% (half the GEMM work per rescaled element of D = 128).
// Requirements: v13's.
#include "kernels/attention/fa2_kernel.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

/// v13's configurations with the conditional rescale.
template <int kD>
using V14Config = fa2::Config<kD, kD == 256 ? 1 : 2, kD == 256 ? 32 : 64, kD == 64,
                              kD == 256 ? 1 : 2, /*lazy rescale*/ true>;

struct V14Name {
  static constexpr const char* kName = "attention.v14";
};

}  // namespace

Variant gpu_v14_fa2_lazy_rescale() {
  return fa2::variant<fa2::Rung<V14Config, V14Name>>(
      "attention.v14_fa2_lazy_rescale",
      "v13 with FA4's conditional rescaling: a warp keeps its rows' running max, and O and the "
      "row sums unscaled, until some row's max grows past 2^8");
}

}  // namespace klab::attention

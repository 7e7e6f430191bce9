// v07 fa4_lazy_rescale (sm_90a): v05 with FlashAttention 4's conditional rescaling. v05 multiplies
// O (kD / 2 registers a thread: 64 FMULs at D = 128) and the row sums by exp2(m_old - m_new)
// after every key block's softmax, though under a causal walk from the last key block down the
// running max settles within the first blocks. Here a warp keeps its rows' max, and leaves O and
// l as they are, until some row's max grows by more than 2^8 (kLazyRescaleLog2 in log2 units:
// the terms then stay below 256, far inside fp32 and bf16/f16); when one does, every row of the
// warp rescales as v05's do. The vote (__any_sync) makes the skip a uniform branch around the
// rescale, after the P V wait. The final O / l is exact either way: only which max the terms are
// taken against changes, and the log-sum-exp is m + log2 l of the same pair.
// Changes from v05: the softmax's options (fa3_kernel.cuh's SoftmaxOptions<0, true>); the block,
// the rounds and the ping-pong are v05's.
// Expected: fewer FMULs and less register traffic on the issue slots the softmax shares with
// the other warpgroup's GEMM issue; a gain where the softmax, not the tensor pipe, bounds a
// round (D = 64), little at D = 128 and 256. Prediction: docs/worklogs/attention.md.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V07Name {
  static constexpr const char* kName = "attention.v07";
};
}  // namespace

Variant gpu_v07_fa4_lazy_rescale() {
  return fa3::variant<fa3::OverlapRung<V07Name, fa3::SoftmaxOptions<0, true>>>(
      "attention.v07_fa4_lazy_rescale",
      "v05 with FA4's conditional rescaling: a warp keeps its rows' running max, and O and the "
      "row sums unscaled, until some row's max grows past 2^8");
}

}  // namespace klab::attention

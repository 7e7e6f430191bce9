// v24 fa3_max_free (sm_90a): v09 (three consumers at D = 64, FlashAttention 4's lazy rescale)
// with the block's max off the softmax's common path (fa3_kernel.cuh's max_free_block). In the
// rounds whose block no mask touches, each term is taken against its row's running max at once
// and the rows' sums are checked instead: a lane's row sum of at most 2^8 bounds each of its
// terms by 2^8, which is all the lazy rescale keeps the max for. Where every lane of a warp
// passes (every round past a row's first blocks, unless its scores jump), the terms, sums and l
// are v09's bit for bit, without the 64 FMNMX of the max trees, the vote and the shuffles between
// the S product's wait and the first MUFU.EX2; where a row's largest term passes 2^8 it raises its
// max by the term's binary exponent and scales exactly; where a term overflowed, or a row has seen
// no key yet, the scores are computed again on the CUDA cores (recompute_s) and take v09's path.
// Why: at D = 64 v09's round is short (its two GEMMs take ~512 tensor-pipe clocks), and
// Nsight's top stall there is `wait`, fixed-latency dependencies: the chain before the round's
// first exponential is what the other warpgroups' GEMMs cannot fill.
// K's slot (and Q, where a rung hands it back after its last S) is handed back after the softmax
// instead of before it, since the rare case reads it again: the producer refills the slot a
// softmax later, with two more stages in flight.
// At D = 128 and 256 the rung is v07's configuration (two consumers) with the same softmax.
// Prediction: docs/worklogs/attention.md ("The softmax without the block's max").
// Requirements: v05's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V24Name {
  static constexpr const char* kName = "attention.v24";
};
}  // namespace

Variant gpu_v24_fa3_max_free() {
  return fa3::variant<fa3::OverlapRung<V24Name, fa3::SoftmaxOptions<0, true, 0, /*max-free*/ true>,
                                       fa3::ThreeConsumerConfig>>(
      "attention.v24_fa3_max_free",
      "v09 with the unmasked blocks' terms taken against the running max at once, their sums "
      "checked instead of the block's max (the max, a rescale or the scores again only where a "
      "sum says so)");
}

}  // namespace klab::attention

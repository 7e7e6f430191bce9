// v23 fa3_two_consumer_wide_keys (sm_90a): v07 at non-causal D = 64 on cuDNN's block there: two
// consumer warpgroups on 256-key blocks, the overlap kept, P V's A read from shared memory.
// Why: at D = 64 non-causal the rungs stay under cuDNN (v09 0.965-0.968x at 8k paired), and the
// wider blocks tried so far lost: three consumers with P through shared memory (v11, 0.86-0.91x
// v09) and FlashAttention 3's tile without the overlap (v22, 0.937-0.939x cuDNN; on two
// consumers and 256 keys 0.77x). cuDNN's kernel at this shape (2026-12-04_aafb937_attention_v22's
// Nsight) runs 384 threads (a producer and two consumer warpgroups), 168 registers a thread and
// a 64 x 256 x 64 tile in its name: two consumers on 256-key blocks. With O (32) and S (128) a
// thread there is no room for P beside S under the overlap, so its P must leave the registers
// (its store bank conflicts, 61.7% of store wavefronts, would fit P's stores): v11's path, here
// at half v11's consumers and 1.6x its key block, so the P stores and the fence between rounds
// (v11's measured cost) are amortised over twice the tensor work a round of a warpgroup.
// - fa3::TwoConsumerWideKeyConfig: Config<64, 2 stages, V one block behind K, 2 consumers, 256
//   keys, P in shared memory>: Q's 16 KiB, two stages of 64 KiB, two P tiles of 32 KiB.
// - The loop is v07's (fa3_overlap.cuh's consume_tile with store_p and issue_pv_smem, v11's).
// Causal problems and D = 128, 256 run v07's configuration.
// Prediction (written before it ran), D = 64 non-causal, B = 4, N = 8k, H = 32, paired with cuDNN
// beside v09: 0.92-1.00x v09 (the P stores' cost per key as v11's, the round's fixed costs
// halved per key against v09's 128-key rounds).
// Measured (2026-12-05_382bde2_attention_v23_sanitizers): refuted, 0.70-0.71x cuDNN.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V23Name {
  static constexpr const char* kName = "attention.v23";
};
}  // namespace

Variant gpu_v23_fa3_two_consumer_wide_keys() {
  return fa3::variant<fa3::OverlapRung<V23Name, fa3::SoftmaxOptions<0, true>, fa3::OverlapConfig,
                                       fa3::TwoConsumerWideKeyConfig>>(
      "attention.v23_fa3_two_consumer_wide_keys",
      "v07 at non-causal D = 64 on cuDNN's block: two consumers on 256-key blocks, P V's A from "
      "shared memory");
}

}  // namespace klab::attention

// v22 fa3_serial_wide_keys (sm_90a): v09 at non-causal D = 64 on FlashAttention 3's own tile
// there: 192 query rows by 176 keys, P kept in registers, and no intra-warpgroup overlap (its
// tile_size_fwd_sm90 for head dimension 64: MmaPV_is_RS, not IntraWGOverlap).
// Why: v09 reaches 0.966-0.969x cuDNN at D = 64 non-causal 8k (paired launch by launch,
// 2026-12-04_c6ccbfb_attention_interleaved), where every other goal shape is at or above 1.00x.
// At D = 64 a round's two GEMMs and its softmax's exponentials take the same time (a row of 176
// keys: 4 x 88 clocks of S and 11 x 32 of P V on the tensor pipe, 88 MUFU instructions a thread
// at 8 clocks a warp, three warps a scheduler), so what a round costs beyond them — the
// ping-pong handoff, the mbarrier waits, the row maxima's and sums' shuffles, the wgmma waits —
// is what separates the rung from the pipes' limit. A wider key block spreads those over more
// work; v11 tried it with the overlap kept, which left no registers for P (O, S and P in flight:
// 176 of 160) and sent P through shared memory, whose stores and proxy fence between rounds cost
// more than the width gave (0.86-0.91x v09). FlashAttention 3's loop without the overlap waits
// for each wgmma group before the next: S and O are live (32 + 88 registers, fewer than v09's O,
// S and P, 128), then P and O, never S and P together (issuing P_{j-1} V_{j-1} and S_j as one group, this rung's first build, put all three in flight
// and ptxas serialized its wgmma, C7511). The other two consumer warpgroups' rounds keep the
// tensor pipe fed while one does its softmax, which the three-way ping-pong orders.
// - The round (fa3_overlap.cuh's consume_tile_serial): wait for K_j, the ping-pong's turn, S_j,
//   hand the turn on, wait for S_j; hand K_j back; mask, softmax, rescale O, P_j into
//   registers; wait for V_j (loaded with K_j), P_j V_j, wait for it; hand V_j back.
// - Four stages of 176 keys (44 KiB each) beside Q's 24 KiB: 200 KiB.
// Causal problems and D = 128, 256 run v09's configuration.
// Changes from v09: the non-causal D = 64 configuration (fa3::SerialWideKeyConfig) and the loop
// it selects; the softmax (lazy rescale) and the producer are v09's.
// Prediction (written before it ran), D = 64 non-causal, B = 4, N = 8k, H = 32, paired with
// cuDNN launch by launch beside v09: 1.02-1.06x v09, 0.99-1.03x cuDNN; elsewhere v09's kernel
// (within noise of it).
// Measured (2026-12-04_aafb937_attention_v22): 0.938-0.939x cuDNN at 8k paired, v09 0.966-0.968x
// in the same calls: refuted, kept as the ablation (docs/worklogs/attention.md).
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V22Name {
  static constexpr const char* kName = "attention.v22";
};
}  // namespace

Variant gpu_v22_fa3_serial_wide_keys() {
  return fa3::variant<fa3::OverlapRung<V22Name, fa3::SoftmaxOptions<0, true>,
                                       fa3::ThreeConsumerConfig, fa3::SerialWideKeyConfig>>(
      "attention.v22_fa3_serial_wide_keys",
      "v09 on FlashAttention 3's non-causal D = 64 tile: 192 x 176, P in registers, no "
      "intra-warpgroup overlap");
}

}  // namespace klab::attention

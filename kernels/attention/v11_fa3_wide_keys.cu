// v11 fa3_wide_keys (sm_90a): v09 at non-causal D = 64 on wider key blocks, as FlashAttention 3
// runs that head dimension (192 query rows by 192 keys), with P V's A operand read from shared
// memory. In bcbcce5's and e11578e's runs v09 reached 0.89-0.96x cuDNN at D = 64 non-causal
// (1.06x causal): its tensor pipe 55.7% busy, the top stall `wait` (fixed-latency dependencies),
// the issue slots half used. A round's fixed costs (the ping-pong handoff, two mbarrier waits,
// the row maxima's and sums' quad shuffles, the O rescale, the wgmma waits) do not grow with the
// key block; a wider block spreads them over more tensor work and gives each softmax more
// independent exponentials.
// - Registers: S of 192 keys takes 96 a thread; with O's 32 and P's 48 in flight the overlap
//   would need 176 of the 160 three consumer warpgroups get. So P goes to shared memory, as
//   FlashAttention 3 does for this tile: after a round's P V has completed, each thread stores
//   its rounded P pairs into its warpgroup's (64, keys) P tile (Q's panel layout, the K-major A
//   of an SS wgmma) and fences them for the async proxy; the next round's ping-pong wait (or, for
//   the last P V, a warpgroup barrier) orders every warp's stores before the wgmma that reads
//   them.
// - The key block (fa3_tile.hpp's kWideKeys, kWideStages): 192 keys and two stages (Q 24 KiB,
//   three P tiles of 24, two K/V stages of 48: 192 KiB) left ptxas spilling ~14 registers a
//   consumer thread (d645a54's run); the rung runs 160 keys and three stages (Q 24 KiB, three P
//   tiles of 24 in whole panels, three stages of 40: 216 KiB), O and S 32 + 80 live registers.
// Causal problems and D = 128 and 256 run v09's configuration (FlashAttention 3 keeps 128-key
// blocks under the causal mask, where a wider block masks more of the diagonal).
// Changes from v09: the non-causal D = 64 configuration (fa3::WideKeyConfig) and the P path it
// selects in the overlapped loop (store_p, issue_pv_smem); the softmax (lazy rescale) and the
// producer are v09's. Measured slower than v09 (docs/worklogs/attention.md): kept as the
// ablation.
// Prediction: docs/worklogs/attention.md.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V11Name {
  static constexpr const char* kName = "attention.v11";
};
}  // namespace

Variant gpu_v11_fa3_wide_keys() {
  return fa3::variant<fa3::OverlapRung<V11Name, fa3::SoftmaxOptions<0, true>,
                                       fa3::ThreeConsumerConfig, fa3::WideKeyConfig>>(
      "attention.v11_fa3_wide_keys",
      "v09 with 160-key blocks at non-causal D = 64 (FlashAttention 3 runs 192 x 192 there), P "
      "V's A from shared memory");
}

}  // namespace klab::attention

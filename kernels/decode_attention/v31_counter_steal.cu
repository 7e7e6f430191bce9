// v31 counter_steal: v13 whose counter path's CTAs share their sequence's 64-key stages through a
// ticket counter in global memory (v25's walk, unclustered).
// Where v13 does not cluster (B = 1 from 32k keys, the ragged batch, most B > 1 shapes), its
// counter path gives each split a fixed chunk, and CTAs of equal work end their streams at
// different times: at (1, 32k) its 256 CTAs on all 132 SMs ended their last stages between 25.5
// and 33.3 us (median 31.5) and the counter merge took the last CTA to 39.8
// (2026-12-05_964dca6_decode_v25_v27's timeline). v25 balanced the stream inside each cluster with
// a counter in rank 0's shared memory (its streams ended within 3.6 us of each other), but its
// 128 clustered CTAs ran on 112 SMs and lost more than the balance gained.
// What changes (tma_pages_kernel's kSteal on the unclustered kernel): each split of a row group
// first takes units r, r + splits, .. (the ring's first fill), then the next unit of a global
// counter of the row group, one atomicAdd (L2) a stage, issued a stage before its unit's table
// entries are loaded, so its answer is back while the stage before streams. A CTA whose SM draws
// faster takes more units; all 132 SMs keep streaming; the merge is v13's counter merge, whose
// CTA resets the tickets with the arrival counter (every CTA of the group took its last ticket
// before it arrived). The tickets are `groups` ints after the arrival counters in the workspace
// (zeroed when allocated, left at zero). Where v13 clusters (B = 1 up to 16k keys, (16, 8k)'s
// pairs), its clustered kernel, unchanged. A partial now holds whichever units its CTA took, so
// the output's last bits may differ from launch to launch (as v25's), within the same bound.
// Expected bottleneck: DRAM at the stream's end; the counter merge's tail (~6.5 us at (1, 32k)).
// Prediction (written before it ran), bf16, Qwen3-8B heads, launch by launch beside v13 and
// cuDNN's paged SDPA: the streams end together, near where the median CTA's ended (an SM that
// finished early under v13 left its DRAM share to the others, so not all of the 7.8 us spread is
// gained): (1, 32k) 1.04-1.07x v13's speed at pages of 16 and 64; (1, 128k) 1.01-1.04x; the
// ragged batch level to 1.02x (its imbalance is between sequences, not within one); shapes where
// v13 clusters, level (the same kernel). Refuted if (1, 32k) gains under 3%.
// Measured on an H100 (2026-12-06_c1e6cdd_qk_e4m3_contig_v31; docs/worklogs/decode.md): refuted.
// The last stages end within 5.0 us of each other at (1, 32k) (v13: 12.7) but the last 1.4 us
// later than v13's; 0.995x / 1.006x v13 at (1, 32k) pages of 16 / 64, 1.018x at (1, 128k),
// 1.006x on the ragged batch. The counter merge's tail after the stream (~6.9 us) is untouched.
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v31_counter_steal() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .counter = kCounterSteal}>(
      "v31_counter_steal",
      "v13 whose counter path's splits share their sequence's 64-key stages through a ticket "
      "counter a row group in global memory (one atomicAdd a stage); v13's clusters unchanged",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

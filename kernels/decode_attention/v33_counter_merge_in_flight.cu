// v33 counter_merge_in_flight: v32 whose merging CTA keeps more of its L2 loads in flight.
// `klab timeline` of v32 at (1, 32k) on an H100 (2026-12-06_826ba41_decode_v32, medians from the
// first CTA's start, cold): the CTA's rows stored 0.73 us after the warps' partials, as v32
// predicted, but the eight merging CTAs end 3.1-3.7 us after the last arrival (peers_met's last
// 50.74 us, merged 53.82 median, 54.42 last), where under 2.5 was predicted: the last stage's end
// to the launch's end is 5.7 us (v13: 6.8). v32's pass is a chain of L2 round trips: the splits'
// lse read for the max, read again for the weights, a barrier, then each thread's 32 partial
// float4s in four batches of eight (a batch's first use waits for its loads).
// What changes (merge_counted_rows' kEarly; tma_pages_kernel's kMergeInFlight): each thread's
// first sixteen partial loads are issued before the weights pass (they need no weight), each lse
// is read once (kept in the shared weights until its weight replaces it), and the rest of the
// splits go sixteen loads at a time, issued together (indices past the last split clamped to it,
// at weight 0): at 32 splits, two round trips where v32 had six. The sums add the splits in v32's
// order. At D = 128 the unclustered kernel takes 164 registers (v32: 128; two CTAs an SM either
// way, as its shared memory allows), no stack; at D = 64 eight loads, to keep three CTAs an SM.
// Everything else is v32's (its rows, its arrival, v13's clusters where v13 clusters).
// Expected bottleneck: DRAM for the stream; for the tail, the arrival's fence and two L2 round
// trips in the merging CTA.
// Prediction (written before it ran), bf16, Qwen3-8B heads, launch by launch beside v13, v32 and
// cuDNN's paged SDPA: `klab timeline` at (1, 32k): the merging CTAs end 1.5-2.2 us after the last
// arrival (v32: 3.1-3.7), the last stage's end to the launch's end 4.2-4.8 us (v32: 5.7); `klab
// bench` (1, 32k) 1.02-1.03x v32's speed at pages of 16 and 64; (1, 128k) 1.00-1.01x; the ragged
// batch and the shapes where v13 clusters level. Refuted if (1, 32k) gains under 1.5%.
// Measured on an H100 (2026-12-06_dfab43a_decode_v33; docs/worklogs/decode.md): 1.020x / 1.021x
// v32 at (1, 32k) (pages of 16 / 64) and 1.007x at (1, 128k), as predicted; but the merging CTAs
// end 2.4-2.9 us after the last arrival (v32 2.8-3.4 in the same run), not 1.5-2.2, and the tail
// is 5.0 us (v32 5.5), not 4.2-4.8.
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v33_counter_merge_in_flight() {
  return cluster_merge_variant_on<2, /*kPush*/ true, 1, false, 0, kGridSplits,
                                  /*kEarlyIssue*/ false, /*kOneCtaAnSm*/ false, /*kSteal*/ false,
                                  kCounterCompactTail | kCounterMergeInFlight>(
      "v33_counter_merge_in_flight",
      "v32 whose merging CTA issues each thread's first sixteen partial loads before the weights, "
      "reads each lse once and keeps sixteen loads in flight (two L2 round trips at 32 splits, "
      "v32's six); v13's clusters unchanged",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

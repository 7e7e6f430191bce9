// v32 counter_compact_tail: v13 whose counter path ends the way its push merge does: the CTA's
// rows merged over its warps with each row's weights computed once, a float4 a thread, and the
// merging CTA's pass with each row's split weights computed once into shared memory.
// `klab timeline` of v13 and v31 at (1, 32k) on an H100 (2026-12-06_c1e6cdd_qk_e4m3_contig_v31;
// medians from the first CTA's start, cold, v31): last stage done 48.35 us, warps' partials
// 48.82, the CTA's rows stored (merge_warp_rows: an element a thread, the warps' exponentials
// and a division each) 50.99, arrival 51.74, the eight merging CTAs done at 56.24 (merge_partials:
// every float4 recomputes its 32 splits' weights; the code runs once a launch, cold); the last
// stage's end to the launch's end: 6.9 us, where v13's push merge takes ~2.8 us from the last
// stage (v25's timeline, 964dca6).
// What changes (cta_rows.cuh; tma_pages_kernel's kCompactTail on the unclustered kernel):
// store_cta_rows: cta_row_weights (one thread a row: the warps' weights and the lse, as the push
// merge computes them; the push merge now calls the same two helpers) and a float4 a thread,
// stored to the workspace through L2 (__stcg); merge_counted_rows: a warp a row turns the splits'
// lse into normalised weights in the stage memory that the stream no longer uses, then each
// thread sums a float4 over the splits, eight loads in flight, with one shared load a split
// instead of an exponential; compact loops (#pragma unroll 1 outside the eight loads). Where v13
// clusters, its clustered kernel, unchanged.
// Expected bottleneck: DRAM for the stream; the arrival's fence and the merging CTA's L2 round
// trips (pass 1, then the float4s) for the tail.
// Prediction (written before it ran), bf16, Qwen3-8B heads, launch by launch beside v13, v31 and
// cuDNN's paged SDPA: `klab timeline` at (1, 32k): the rows phase from ~2.2 us after the partials
// to under 1, the merging CTAs' pass from ~4.5 us after their arrival to under 2.5, so the last
// stage's end to the launch's end from ~6.9 us to 3-4; `klab bench` (1, 32k) 1.05-1.09x v13's
// speed on the H100 (57-58 us), pages of 16 and 64; (1, 128k) 1.01-1.03x; the ragged batch level
// to 1.02x; where v13 clusters, level. Refuted if (1, 32k) gains under 3%.
// Measured on an H100 (2026-12-06_826ba41_decode_v32; docs/worklogs/decode.md): refuted at (1, 32k)
// with pages of 16 and at (1, 128k). The rows phase held (0.73 us after the partials), the merging
// pass did not (3.1-3.7 us after the last arrival): the tail went from 6.8 to 5.7 us, not 3-4;
// 1.027x / 1.049x v13 at (1, 32k) (pages of 16 / 64), 0.999x / 1.005x at (1, 128k), level elsewhere.
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v32_counter_compact_tail() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .counter = kCounterCompactTail}>(
      "v32_counter_compact_tail",
      "v13 whose counter path stores each CTA's rows and merges the splits' partials with each "
      "row's weights computed once (the push merge's way), in compact loops; v13's clusters "
      "unchanged",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

// v36 dependent_merge: v32 whose counter path leaves the merge to a second kernel, launched
// programmatically (dependent_merge.cuh), instead of to the row group's last CTA.
// `klab timeline` of v32 at (1, 32k) on an H100 (2026-12-06_826ba41_decode_v32; from the first
// CTA's start, cold): the last CTA's last stage done 48.74 us, its rows stored 49.89, the last
// arrival (fence, barrier, atomic) 50.74, the eight merging CTAs done 53.82 (median) to 54.42: of
// the 5.7 us between the last stage and the launch's end, 4.6 come after the rows are stored, and
// the merging pass alone (one CTA a row group: the lse, then batches of eight partial loads a
// thread, a chain of L2 round trips) takes 3.1-3.7. v33 put the pass's loads in flight and failed
// its check on the ragged batch, the failure depending on timing (decode.md).
// What changes: the split kernel (tma_pages_kernel's kDependentMerge) ends when its rows are
// stored: no fence, no arrival counter, no election. The merge kernel's CTAs are scheduled while
// the split kernel streams (it allows the dependent launch at its start) and wait in
// griddepcontrol.wait for its end, which makes the partials visible; each merges one query row
// with eight warps, every split's lse and partial slice of a batch loaded at once: one L2 round
// trip at 32 splits. The ordering is the one the CUDA programming model gives a kernel boundary,
// not an arrival protocol of the kernel's own. It never clusters: on the counter path's plan
// everywhere (v06's chunks, as v32's where v13 does not cluster), so that (1, 1k) and (1, 4k),
// where v13's push merge ends the launch, show the dependent merge too.
// Expected bottleneck: DRAM for the stream; for the tail, the dependent grid's release after the
// split kernel's end and one L2 round trip.
// Prediction (written before it ran), bf16, Qwen3-8B heads, launch by launch beside v32, v13 and
// cuDNN's paged SDPA: (1, 32k) 1.03-1.05x v32's speed, pages of 16 and 64 (the tail from ~4.6 us
// after the rows to ~2); (1, 128k) 1.00-1.02x; the ragged batch 0.97-1.00x (its merges no longer
// overlap the other sequences' streams: each row group waits for the whole grid); (16, 8k)
// within 2% of v13's clustered pairs; (1, 4k) within 3% of v13's push merge (132 SMs against
// the clusters' 112, one merge kernel against the owners' merge). Refuted if (1, 32k) gains
// under 2%.
// Measured on an H100 (2026-12-07_4a5b44f_decode_v36_v37, one process; docs/worklogs/decode.md):
// refuted. (1, 32k) 1.016x cuDNN paired against v32's 1.009x (1.007x v32); (1, 4k) 1.077x against
// v13's 1.234x (the counter plan's 256 two-stage CTAs there). Every shape it takes passes
// (2026-12-07_4a5b44f_decode_tail: 57 of the family's 63 bf16 problems, the others outside its
// page limits), memcheck, racecheck and synccheck clean; its split kernel's timeline there puts
// the dependent merge at ~3 us after the split kernel's end, against ~4 us of v32's own merge.
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v36_dependent_merge() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 2, .push = true, .counter = kCounterCompactTail | kCounterDependentMerge}>(
      "v36_dependent_merge",
      "v32 whose counter path ends at the CTA's stored rows; the splits merged by a second "
      "kernel launched programmatically, a CTA a row, every split's loads of a batch at once; "
      "never clustered",
      [](const Problem& p) { return counted(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

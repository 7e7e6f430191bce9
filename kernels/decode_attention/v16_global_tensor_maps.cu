// v16 global_tensor_maps: v13 with K's and V's tensor maps in device memory instead of kernel
// parameters.
// `klab timeline` of v13 at (1, 4k) (2026-12-04_2b7f8cf_decode_v13_timeline; medians from the
// first CTA's start): inputs 0.91 us, first stage issued 1.73, cold and hot alike (hot: 0.94 and
// 1.74), and at (1, 1k) 0.90 and 1.70; v11's 0.77 and 1.70. The first issue sits ~1.6-1.7 us
// after the start whatever the inputs' time, the data's place or the length: not the length's
// round trip (the producer's table entries are loaded beside it, before the CTA's barrier, which
// the inputs mark follows) but the copies themselves. Between the barrier and the first copy the
// producer runs ~110 instructions of address arithmetic and no wait but its table entry's; the
// copies take the maps from the parameters' space, prefetched at the first instruction (v13),
// which moved nothing (v11 prefetched them just before the copy). The likeliest wait left is
// the TMA unit's fetch of a map from the launch's parameter buffer, new at each launch.
// What changes: the launch's prepare step copies both maps once into the workspace's tail
// (global_maps_offset; a serving engine would do it when it allocates its cache); the clustered
// kernel fences them (fence.proxy.tensormap acquire, as the CUDA guide asks of a map in global
// memory), prefetches them at its first instruction and copies through them. The maps are the
// same bytes; only where the TMA unit reads them changes. The traced kernels (v11, v13 and v16)
// also mark first_ready, the producer at its first copies before their instructions, so the
// timeline splits the gap in two.
// Expected bottleneck: the launch and the stream, as v13.
// Prediction (written before it ran), Qwen3-8B heads, bf16, pages of 16, paired with v13 and
// cuDNN's paged SDPA: `klab timeline` at (1, 4k): first_ready within 0.1 us of the inputs for
// both; v13's first_issue 0.6-0.8 us after it, v16's under 0.2 us after (first issue ~1.0-1.1 us
// from the start), its end 0.5-0.7 us earlier than v13's; `klab bench` at (1, 4k) 11.6-11.9 us,
// 1.33-1.40x cuDNN (v13 1.29x); at (1, 1k) and (1, 8k) the same ~0.6 us off; from (16, 8k) on,
// where the stream is long, within noise of v13. If the first issue does not move, the fetch is
// not the wait, and the split the new mark gives says where it is.
// Measured (2026-12-05_382bde2_decode_v15_v18): refuted; first_issue - first_ready unchanged.
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v16_global_tensor_maps() {
  return cluster_merge_variant<TmaRung{.elem = 2, .push = true, .global_maps = true}>(
      "v16_global_tensor_maps",
      "v13 with K's and V's tensor maps copied once to device memory by the prepare step, fenced "
      "and prefetched at the first instruction, instead of read from the launch's parameters");
}

}  // namespace klab::decode_attention

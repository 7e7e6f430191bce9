// v24 one_cta_an_sm: v13 whose clusters each take as many SMs as they have CTAs.
// Why: at (1, 4k) v13 launches eight clusters of 16 CTAs (a KV head's 16 splits of 256 keys), two
// CTAs an SM by shared memory, and the block scheduler puts them on 112 SMs: 16 SMs run two CTAs
// each, 20 run none (every `klab timeline` of v13 at B = 1 since 2b7f8cf says "128 CTAs on 112
// SMs"). Where an SM's intake bounds a CTA's stream, the CTAs sharing an SM stream at half rate
// and end last, and the launch lasts as long as they do; at B = 1 every split has the same keys.
// What changes (TmaPagesLaunch::cluster_smem_floor): the clustered launch asks for half an SM's
// shared memory a CTA (one_cta_an_sm_smem; v13's kernel needs less and uses what it needs), so no
// SM holds two and each cluster spans 16 SMs of a GPC, 128 of the 132; it does so only where
// cudaOccupancyMaxActiveClusters says all of the launch's clusters fit at that size at once
// (asked once per grid), and launches v13's way otherwise. The kernels are v13's (the same
// instantiations: their SASS is v13's); the counter path is v13's.
// Expected bottleneck: as v13 at B = 1 (the first copies, the stream, the merge's chain), with
// the stream no longer halved on the shared SMs.
// Prediction (written before it ran), bf16, Qwen3-8B heads, pages of 16, beside v13 and cuDNN's
// paged SDPA launch by launch: if the SM-share probe in v13's timeline holds (the 32 CTAs on
// shared SMs end 0.8 us or more after the others' median), `klab timeline` at (1, 4k) cold shows
// 128 CTAs on 128 SMs and the last CTA's end 0.5-1.0 us before v13's, and `klab bench` at (1, 4k)
// 11.4-11.9 us (v13 12.3), 1.33-1.40x cuDNN; at (1, 32k) (128 CTAs of 2048 keys, the counter
// path, v13's plan) v13's time; at (1, 1k) (four clusters, 64 CTAs on 64 SMs already) v13's time.
// Refuted if (1, 4k) gains less than 0.3 us, or if the clusters do not fit (v13's launch: then the
// timeline shows 112 SMs again).
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v24_one_cta_an_sm() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .one_cta_an_sm = true}>(
      "v24_one_cta_an_sm",
      "v13 whose clustered launch asks for half an SM's shared memory a CTA, so that each "
      "cluster of 16 spans 16 SMs, where all of its clusters fit so at once",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

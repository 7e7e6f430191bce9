// v26 steal_one_cta_an_sm: v25 whose clustered launch takes one CTA an SM (v24's way).
// Why: v25 balances the stream within a cluster, but v13's B = 1 launch puts 128 CTAs on 112
// SMs (two on 16 of them: every `klab timeline` since 2b7f8cf), so a cluster that holds shared
// SMs streams through fewer SMs than one that does not, and the counter balances within a
// cluster only. v24 (one CTA an SM on v13's static chunks) measured level at (1, 4k); with the
// stream balanced, what an SM's intake gives is what remains to see.
// What changes: TmaPagesLaunch::cluster_smem_floor = half an SM's shared memory, where all of
// the launch's clusters fit so at once (v24's launch); the kernels are v25's (its instantiations,
// so v26 has no timeline of its own: the trace pointer is v25's file's).
// Expected bottleneck: v25's.
// Prediction (written before it ran), beside v25 in the same run: an SM streams at most ~34 GB/s
// (hgemm v23's header: two CTAs an SM streamed no faster), so v25's 112 SMs draw at most ~3.8
// TB/s and v26's 128 ~4.35: (1, 32k) and (1, 128k) 1.03-1.12x v25; (1, 4k) level; (1, 1k) up to
// 0.4 us slower (v24 against v13). Refuted if no shape gains 2%.
// Measured (2026-12-05_964dca6_decode_v25_v27): refuted, v25's time within noise everywhere.
// Requirements: v13's.
#include "kernels/decode_attention/steal_plan.hpp"
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v26_steal_one_cta_an_sm() {
  return cluster_merge_variant_on<TmaRung{
      .elem = 2, .push = true, .one_cta_an_sm = true, .steal = true}>(
      "v26_steal_one_cta_an_sm",
      "v25 whose clustered launch asks for half an SM's shared memory a CTA (v24's way), so that "
      "each cluster of 16 spans 16 SMs, where all of its clusters fit so at once",
      [](const Problem& p) { return plan_v25(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

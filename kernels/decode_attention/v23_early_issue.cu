// v23 early_issue: v13 whose producer issues its first stages before the CTA's barrier.
// Why: v13's timeline at (1, 4k), cold (2026-12-05_bbf18de_decode_v19, medians from the first
// CTA's start): the length arrives at 0.67 us and with it the first stage's table entries (they
// are loaded together), but the producer waits at the CTA's barrier for Q, the ring's barriers
// and the receive barrier (`inputs`, 1.41 us; hot 1.17) before its first copy (`first_entry`
// 1.63, `first_issue` 2.26). Its copies need neither Q nor the receive barrier: only the ring's
// barriers, which it can initialise itself.
// What changes (tma_pages_kernel's kEarlyIssue, clustered kernel only): the producer's lane 0
// initialises the ring's full and empty barriers and fences them; the producer then issues the
// ring's first stages (all three at D = 128: an empty ring waits for no slot) as soon as its table
// entries and the length are in, and joins the CTA's barrier after them; the other warps do as in
// v13 (Q, the receive barrier) and meet the ring's barriers initialised after the CTA's barrier,
// which they reach before any wait on them. The counter path (where v13 does not cluster) is
// v13's kernel.
// Expected bottleneck: as v13 at B = 1 (the stream's first round trip, the merge's chain), less
// the barrier's wait before the first copy.
// Prediction (written before it ran), bf16, Qwen3-8B heads, pages of 16, beside v13 and cuDNN's
// paged SDPA in the same run: `klab timeline` at (1, 4k) cold: first_issue 1.4-1.8 us (v13 2.26),
// the last CTA's end 0.4-0.8 us earlier than v13's; `klab bench` at (1, 4k) 11.6-12.0 us (v13
// 12.3), 1.31-1.36x cuDNN paired (v13 1.29x); (1, 1k) the same microseconds gained; from (1, 32k)
// on and at the batched shapes within noise of v13. Refuted if first_issue moves by less than
// 0.4 us, or the bench by less than 0.3 us at (1, 4k).
// Requirements: v13's.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v23_early_issue() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .early_issue = true}>(
      "v23_early_issue",
      "v13 whose producer warp arms the ring's barriers itself and issues the first stages as "
      "soon as the length and its table entries arrive, before the CTA's barrier",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

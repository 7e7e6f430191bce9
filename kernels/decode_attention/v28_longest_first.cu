// v28 longest_first: v13 whose counter path, on a ragged batch, starts its CTAs longest first
// from a work list the host builds (longest_first.hpp).
// Why: the counter path's (split, row group, sequence) grid starts the CTAs in slot order
// whatever their lengths, so one of the longest may be among the last to start and stream alone
// at the launch's end; plan_split_kv_waves caps a ragged batch's chunks at half a slot's mean
// work for that reason, and still the ragged batch of 64 (100 to 16k) reads 89.1-89.9% of the
// read ceiling where (64, 4k) of equal lengths reads 96.6-97.1% (v21 and v13,
// 2026-12-05_a6b47ce_decode_v20_v24). A fluid model of the launch (132 SMs at ~34 GB/s each,
// 4.5 TB/s in all, 264 resident CTAs, ~1.5 us a CTA's start and end) puts v13's chunks of 2368
// keys at 84% in slot order and 90% longest first. Here the host (a serving engine's planner
// knows its requests' lengths, as FlashInfer's plan step does; here read back from the device)
// lists every sequence's splits, most keys first, and copies the list into the workspace once
// (prepare); CTA x of a one-dimensional grid takes item x / groups and row group x % groups, one
// dependent load before its length's. Equal lengths launch v13's grid, and a cluster plan
// v13's clusters: nothing changes there.
// Expected bottleneck: DRAM, as (64, 4k)'s, with the last CTAs' tail shorter.
// Prediction (written before it ran), bf16, Qwen3-8B heads, beside v13, v21 and cuDNN in the same
// run: the ragged batch 1.02-1.05x v13's speed at pages of 16 and 64 (91-94% of the read
// ceiling); v13's times elsewhere.
// Measured (2026-12-05_699d86f_decode_v28_v30, _second, 667ed14's _third; an H100): 1.004-1.012x
// v13's speed on the ragged batch, refuted in size; the SMs end together (Nsight) but DRAM had
// taken the early SMs' share. Not yet on the H200.
// Requirements: v13's; a ragged batch's splits below 2^16 a sequence.
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v28_longest_first() {
  return cluster_merge_variant_on<TmaRung{.elem = 2, .push = true, .grid = kGridWorkList}>(
      "v28_longest_first",
      "v13 whose counter path starts a ragged batch's CTAs longest first, from a work list the "
      "host builds from the lengths and copies to the workspace once",
      [](const Problem& p) { return plan_v13(dims_of(p), device_info().sm_count, 2); });
}

}  // namespace klab::decode_attention

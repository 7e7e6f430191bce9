// v14 fp8_cluster_push_merge: v13's merge by push on v09's e4m3 cache. v12 took v11's cluster
// merge to the e4m3 cache; v13 then replaced that merge (rows pushed by st.async into their
// owners, no cluster barrier after them, no remote loads) and clustered longer chunks: chunks of
// up to 1024 keys, and two splits of any length where the counter plan splits in two as well.
// With half the bytes to stream, a merge's fixed tail is a larger share of an e4m3 launch: the
// same change should gain more here than on bf16.
// What changes: nothing in the kernel (the V scale is applied to the warps' state before the
// partials, so the merge is the dtype's own); plan_v13 on e4m3's stages (elem 1: six half-size
// stages, two CTAs an SM with the receive region).
// Expected bottleneck: as v13.
// Prediction (written before it ran), Qwen3-8B heads, e4m3, paired with v12 and cuDNN's paged SDPA
// (bf16 KV, the only paged cuDNN) in the same run: (1, 4k) 0.8-0.9x v12's time; (16, 8k)
// 1.03-1.06x v12's speed; (1, 16k) clustered (v12: not) 1.05-1.10x; elsewhere v09's kernel,
// within noise of v12.
// Measured (2026-12-04_bb65605_decode_v14_fp8): (1, 4k) 11.6 us against v12's 13.8 (0.84x);
// (16, 8k) 1.04x / 1.03x v12's speed (pages of 16 / 64); (1, 16k) 1.02x, under the prediction;
// elsewhere level with v09 and v12. Over the fastest bf16 rung: 1.71-1.72x at (16, 8k).
// Requirements: v13's, on e4m3 (v09's).
#include "kernels/decode_attention/tma_pages_kernel.cuh"

namespace klab::decode_attention {

Variant gpu_v14_fp8_cluster_push_merge() {
  return cluster_merge_variant<TmaRung{.elem = 1, .push = true}>(
      "v14_fp8_cluster_push_merge",
      "v09 (e4m3, swapped operands) with v13's cluster merge by push: rows stored into their "
      "owners' shared memory (st.async), chunks of up to 1024 keys clustered, and two long "
      "splits");
}

}  // namespace klab::decode_attention

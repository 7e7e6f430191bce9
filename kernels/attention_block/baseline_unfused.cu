// baseline unfused: the block as a framework launches it without the fused kernels: the add and
// the RMSNorm as two launches, then the QKV GEMM, qk_norm_rope_cache's unfused sequence (norm,
// rope, cache write: three launches), decode attention and the output GEMM. Eight launches.
// The fused rungs' baseline (issue 15: the unfused sequence of klab launches, in the same run).
// Expected: at B <= 64 the GEMMs stream their 84 MB of weights (~20 us at the read ceiling) and
// attention its KV cache; each extra launch adds its latency (~2-4 us of a short kernel's start
// and tail): the fused rungs save three launches.
#include "kernels/attention_block/gpu_steps.hpp"
#include "kernels/qk_norm_rope_cache/family.hpp"

namespace klab::attention_block {

Variant gpu_baseline_unfused() {
  Variant v = block_variant(
      "baseline_unfused",
      "add, RMSNorm, QKV GEMM, q/k norm, rope, cache write, decode attention, output GEMM: eight "
      "launches",
      gpu_recipe(norm_unfused, qk_norm_rope_cache::gpu_baseline_unfused));
  v.info.baseline = true;
  return v;
}

}  // namespace klab::attention_block

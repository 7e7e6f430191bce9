// v01 fused: the block with both fused kernels: add + RMSNorm in one launch and
// qk_norm_rope_cache.v02_token_ring (QK-norm, rope and the cache write in one). Five launches.
// Prediction (written before it ran): against the unfused baseline in the same run, 6-10 us less
// at B = 1 and 16 (three launches fewer, ~30-45 us a block there), within 3% at (64, 4k), where
// the KV cache's 1 GiB dominates.
#include "kernels/attention_block/gpu_steps.hpp"

namespace klab::attention_block {

Variant gpu_v01_fused() {
  return block_variant(
      "v01_fused",
      "the fused add + RMSNorm and qk_norm_rope_cache.v02 between the same GEMMs and attention: "
      "five launches",
      fused_recipe());
}

}  // namespace klab::attention_block

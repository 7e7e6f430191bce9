// v21 fa3_line_small_sections: v20 (v16's kernel, causal blocks in the line's order, the short
// section first) with sections of pairs whose K and V fit an eighth of the L2 instead of half.
// Why: v20 gained 1.1% over v16 at causal 8k, 0.8% at 16k (three pairs a section there) and lost
// 0.5% at 4k (2026-12-04_d51af29_attention_v20), where a section holds 12-15 pairs: the blocks
// at work then read the K and V of three times as many pairs as v16's (4-5: a wave is 132 of a
// pair's 32 tiles at a time). Smaller sections keep v16's working set at 4k (3 pairs of this
// H200's 60 MiB L2) and the line's ending; from 8k on they are one pair, v16's order in v20's
// kernel (so at 8k v20 against v21 is one binary under two orders).
// Prediction (written before it ran): if the 4k loss is the working set, causal 4k at or above
// v16 (0.995x cuDNN) by up to the model's 1.2% (sections of 3-6 pairs: 0.5% above the work's
// lower bound against v16's 1.7%); 8k between v16 and v20; 16k and 32k as v16.
// Requirements: v16's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v21";

}  // namespace

Variant gpu_v21_fa3_line_small_sections() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ false,
                                   /*the line in an eighth of the L2*/ 8, kName>(
      "attention.v21_fa3_line_small_sections",
      "v20 with the line's sections in an eighth of the L2 instead of half (3 pairs at causal 4k)");
}

}  // namespace klab::attention

// v25 fa3_max_free_tma_epilogue: v16 (v07's overlapped loop, two consumers, FlashAttention 3's
// TMA epilogue) with v24's softmax: an unmasked block's terms taken against the running max at
// once and the rows' sums checked instead of the block's max (fa3_kernel.cuh's max_free_block; the
// max, an exact power-of-two rescale or the scores again only where a sum says so).
// Why: v24 measures the idea on v09's three consumers, the D = 64 kernel; the causal D = 128
// headline shapes (14.1, and 14.3's 650 TFLOP/s at 16k) run v16's kernel, whose rounds wait on the
// same chain (the vote before the quad's max gave v16 +2% at causal 4k on an H100).
// Prediction: docs/worklogs/attention.md ("The softmax without the block's max").
// Requirements: v16's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <string>

#include "kernels/attention/fa3_tma_epilogue.cuh"

namespace klab::attention {

namespace {

constexpr char kName[] = "attention.v25";

}  // namespace

Variant gpu_v25_fa3_max_free_tma_epilogue() {
  return fa3::tma_epilogue_variant</*trim the diagonal*/ false, /*no line: v16's order*/ 0, kName,
                                   fa3::SoftmaxOptions<0, true, 0, /*max-free*/ true>>(
      "attention.v25_fa3_max_free_tma_epilogue",
      "v16 with v24's softmax: an unmasked block's terms against the running max at once, the "
      "rows' sums checked instead of the block's max");
}

}  // namespace klab::attention

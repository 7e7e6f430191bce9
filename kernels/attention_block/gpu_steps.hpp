#pragma once
// The GPU rungs' norm step (gpu_steps.cu): add and RMSNorm in one launch, or in the two a
// framework runs without the fusion (an elementwise add, then the norm reading residual_out).
#include "kernels/attention_block/compose.hpp"

namespace klab::attention_block {

void norm_fused(const NormArgs& a, Stream stream);
void norm_unfused(const NormArgs& a, Stream stream);

}  // namespace klab::attention_block

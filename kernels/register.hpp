#pragma once
// One registration function per kernel folder; register_all() calls them in course order.
#include "klab/harness/registry.hpp"

namespace klab {

void register_elementwise(Registry& r);
void register_maxpool(Registry& r);
void register_transpose(Registry& r);
void register_reduction(Registry& r);  // sum reduction and row softmax
void register_sgemm(Registry& r);
void register_hgemm(Registry& r);
void register_attention(Registry& r);  // forward: O and log-sum-exp, GQA, causal
/// Decode attention over a paged KV cache: ragged lengths, GQA, speculative tokens.
void register_decode_attention(Registry& r);
/// Residual add, RMSNorm and FP8 quantisation (per token or per 1 x 128 group), fused.
void register_add_rmsnorm_quant(Registry& r);
/// Qwen3's QK-norm, rotary embedding and the paged KV cache write, fused.
void register_qk_norm_rope_cache(Registry& r);
/// A decoder layer's attention block at decode, from the families' rungs (fused against unfused).
void register_attention_block(Registry& r);
/// Wrong or slow on purpose: klab doctor's exhibits (Family::sabotaged; not in `klab run`).
void register_sabotage(Registry& r);

/// Every family klab knows, in the order of the course.
Registry& registry();

}  // namespace klab

#pragma once
// The GPU rungs' norm step (gpu_steps.cu): add and RMSNorm in one launch, or in the two a
// framework runs without the fusion (an elementwise add, then the norm reading residual_out);
// and the graph rungs' launch (graph_variant.cu).
#include "kernels/attention_block/compose.hpp"

namespace klab::attention_block {

void norm_fused(const NormArgs& a, Stream stream);
void norm_unfused(const NormArgs& a, Stream stream);

/// The GPU rungs' GEMM and attention steps (the same in each; only the fused steps differ).
Recipe gpu_recipe(NormLaunch norm, std::function<Variant()> qk);
/// The fused rungs' steps: norm_fused and qk_norm_rope_cache.v02 between gpu_recipe's GEMMs and
/// attention.
Recipe fused_recipe();

/// kStaleBits into KV head h's row of every token's slot (slot_mapping, device pointers) in both
/// pools: the inputs' state at the new tokens' slots (family.hpp), restored.
void write_stale_slots(const Dims& s, const int64_t* slots, void* k_cache, void* v_cache,
                       Stream stream);

/// A rung whose steps are captured once into a CUDA graph and replayed (graph_variant.cu).
Variant graph_variant(const std::string& name, const std::string& summary, Recipe r);

}  // namespace klab::attention_block

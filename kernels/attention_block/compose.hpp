#pragma once
// How an attention_block rung is put together from other families' rungs: each step is a rung of
// its own family on its own problem (Dims::qkv_gemm, ...), its tensors bound by name to the
// block's tensors or to regions of the block's scratch (y, q_out, lse and each step's workspace),
// prepared once and launched in order on one stream. The same code builds the CPU rung (from the
// families' v00 rungs, scratch on the host) and the GPU rungs (scratch in the workspace the
// harness allocates).
#include <functional>
#include <memory>

#include "kernels/attention_block/family.hpp"

namespace klab::attention_block {

/// The norm step's tensors (device pointers for the GPU rungs, host for the CPU rung).
struct NormArgs {
  const void* x;
  const void* residual;
  const void* weight;
  void* residual_out;
  void* y;
  int64_t tokens, hidden;
};
using NormLaunch = std::function<void(const NormArgs&, Stream)>;

/// A rung's choice of each step.
struct Recipe {
  NormLaunch norm;
  std::function<Variant()> gemm;       ///< an hgemm rung (both projections)
  std::function<Variant()> qk;         ///< a qk_norm_rope_cache rung
  std::function<Variant()> attention;  ///< a decode_attention rung
  bool host = false;                   ///< the CPU rung: scratch on the host, no workspace
  /// The steps after the norm launch programmatically (LaunchArgs::programmatic): each may start
  /// while the one before it ends.
  bool programmatic = false;
};

/// The CPU rung's: the families' v00 rungs and the norm on the host (cpu.cpp).
Recipe cpu_recipe();

/// Every step's can_implement on its own problem (the first refusal, prefixed by the step).
Status block_can_implement(const Recipe& r, const Problem& p);
/// The scratch: y, q_out and lse, then each step's workspace, 256-byte aligned.
size_t block_workspace_bytes(const Recipe& r, const Problem& p);
/// The steps prepared on (p, b): the launch enqueues the five steps in order on its stream.
PreparedLaunch prepare_block(const Recipe& r, const Problem& p, Buffers& b, const LaunchArgs& la);

/// Where the scratch keeps the block's own intermediates (y, q_out, lse): one byte range from the
/// workspace's start, before the steps' workspaces.
size_t block_intermediate_bytes(const Recipe& r, const Problem& p);

/// A rung of this family from a recipe: id "attention_block.<name>".
Variant block_variant(const std::string& name, const std::string& summary, Recipe r);

}  // namespace klab::attention_block

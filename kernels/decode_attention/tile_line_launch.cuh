#pragma once
// The persistent rungs' (v04, v05) host side: their one kernel's arguments, resolved once in
// prepare, and its launch over the plan's CTAs. The rungs share the kernel's signature, its block
// (GqaMmaConfig::kThreads) and the workspace's layout (LineOut); what differs is a Rung type:
//   using Cfg = ...;  // the shared-memory budget: Cfg::smem_bytes(d) bytes of dynamic smem
//   template <int kD>
//   static constexpr auto kernel = the_rungs_kernel<kD>;
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tile_line.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/occupancy.cuh"

namespace klab::decode_attention {

/// A persistent rung's arguments, resolved once (prepare); operator() enqueues its one kernel.
template <class Rung>
struct TileLineLaunch {
  const __nv_bfloat16 *q, *k_cache, *v_cache;
  const int32_t *seq_lens, *block_table;
  LineOut out;
  GqaGeometry g;
  int64_t d;

  template <int kD>
  void enqueue(cudaStream_t stream) const {
    constexpr auto kKernel = Rung::template kernel<kD>;
    constexpr int kSmem = static_cast<int>(Rung::Cfg::smem_bytes(kD));
    device::opt_in_dynamic_smem<kKernel>(kSmem);
    kKernel<<<static_cast<unsigned>(out.plan.ctas), GqaMmaConfig::kThreads, kSmem, stream>>>(
        q, k_cache, v_cache, seq_lens, block_table, out, g);
    KLAB_CHECK_LAUNCH();
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() { enqueue<kD>(stream); });
  }
};

/// Rung's launch on p's tensors and workspace, under `plan` (the one that sized the workspace).
template <class Rung>
TileLineLaunch<Rung> tile_line_launch(const Problem& p, Buffers& b, const TileLinePlan& plan) {
  const Dims s = dims_of(p);
  return {b.ptr<const __nv_bfloat16>("q"),
          b.ptr<const __nv_bfloat16>("k_cache"),
          b.ptr<const __nv_bfloat16>("v_cache"),
          b.ptr<const int32_t>("seq_lens"),
          b.ptr<const int32_t>("block_table"),
          line_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), b.workspace, plan, s.b, s.d),
          gqa_geometry(s),
          s.d};
}

/// The bounds every line rung (v04, v05, v07) keeps: row groups of a sequence within i32, and
/// the line's tile indices times its CTAs within int64 (cta_of).
inline Status line_limits(const std::string& rung, const Dims& s, const TileLinePlan& plan) {
  const int64_t groups = PersistentGqaConfig::row_groups(s);
  if (groups > INT32_MAX / 2)
    return Status::no("decode_attention." + rung + ": hkv x row tiles above 2^30");
  const double line = static_cast<double>(s.b) * static_cast<double>(groups) *
                      static_cast<double>(TileLinePlan{}.key_tiles(s.len));
  if (line * static_cast<double>(plan.ctas) > 1e18)
    return Status::no("decode_attention." + rung + ": the tile line is too long for int64 indices");
  return Status::yes();
}

}  // namespace klab::decode_attention

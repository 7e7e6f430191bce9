#pragma once
// The split-KV rungs' shared device side: where a split's result goes (o and lse directly when
// its sequence has one split, else its fp32 partial in the workspace) and the kernel that merges
// the partials of each query row by log-sum-exp (klab/device/lse_merge.hpp), in split order.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/family.hpp"
#include "kernels/decode_attention/split_kv_plan.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/lse_merge.hpp"
#include "klab/device/mma_sm80.cuh"
#include "klab/harness/phase_trace_hooks.hpp"

namespace klab::decode_attention {

/// Where split `split` of query row `row` (flat (bi * qlen + t) * hq + h) writes: o and lse
/// when the row's sequence has one split, else the workspace's partial. `o_value` is the
/// split's normalised output element (0 for no keys), `lse_value` its natural-log lse (-inf for
/// no keys).
struct SplitOut {
  __nv_bfloat16* o;
  float* lse;
  float* ws_o;    ///< (rows, max_splits, D) fp32 partials
  float* ws_lse;  ///< (rows, max_splits) their lse
  SplitKvPlan plan;

  __device__ __forceinline__ void store_o(int64_t row, int split, int splits, int d, int e,
                                          float o_value) const {
    if (splits == 1)
      o[row * d + e] = __float2bfloat16(o_value);
    else
      ws_o[plan.partial_index(row, split) * d + e] = o_value;
  }
  __device__ __forceinline__ void store_lse(int64_t row, int split, int splits,
                                            float lse_value) const {
    if (splits == 1)
      lse[row] = lse_value;
    else
      ws_lse[plan.partial_index(row, split)] = lse_value;
  }
  /// store_o and (c4 = 0) store_lse for float4 c4 of the row at once, the partial through L2.
  __device__ __forceinline__ void store_o4(int64_t row, int split, int splits, int d, int c4,
                                           float4 x, float lse_value) const;
};

/// The last step of an in-launch merge: float4 c4 of a merged, normalised row of d elements,
/// rounded to bf16 into o, and with c4 = 0 the row's lse.
__device__ __forceinline__ void store_merged4(__nv_bfloat16* o, float* lse, int64_t row, int d,
                                              int c4, float4 x, float lse_value) {
  *reinterpret_cast<uint2*>(o + row * d + c4 * 4) =
      make_uint2(device::pack2<__nv_bfloat16>(x.x, x.y), device::pack2<__nv_bfloat16>(x.z, x.w));
  if (c4 == 0) lse[row] = lse_value;
}

__device__ __forceinline__ void SplitOut::store_o4(int64_t row, int split, int splits, int d,
                                                   int c4, float4 x, float lse_value) const {
  if (splits == 1) {
    store_merged4(o, lse, row, d, c4, x, lse_value);
  } else {
    const int64_t at = plan.partial_index(row, split);
    __stcg(reinterpret_cast<float4*>(ws_o + at * d) + c4, x);
    if (c4 == 0) __stcg(ws_lse + at, lse_value);
  }
}

inline SplitOut split_out(__nv_bfloat16* o, float* lse, void* workspace, const SplitKvPlan& plan,
                          int64_t rows, int64_t d) {
  float* ws = static_cast<float*>(workspace);
  return {o, lse, ws, ws ? ws + rows * plan.max_splits * d : nullptr, plan};
}

constexpr int kMergeWarps = 4;

/// One warp per query row: rows whose sequence has more than one split get o and lse from their
/// partials (the others were written by their one split). Lane l merges elements
/// [l * D / 32, (l + 1) * D / 32).
template <int kD>
__global__ void __launch_bounds__(kMergeWarps * 32)
    merge_splits_kernel(SplitOut out, const int32_t* __restrict__ seq_lens, int64_t rows,
                        int64_t rows_per_seq) {
  const int64_t row = int64_t(blockIdx.x) * kMergeWarps + threadIdx.x / 32;
  if (row >= rows) return;
  const int splits = out.plan.splits_of(seq_lens[row / rows_per_seq]);
  if (splits == 1) return;
  constexpr int kPerLane = kD / 32;
  const int lane = int(threadIdx.x) % 32;
  const float* lse = out.ws_lse + out.plan.partial_index(row, 0);
  const float* part = out.ws_o + out.plan.partial_index(row, 0) * kD;
  const float merged = device::lse_merge_row(
      lse, splits, lane * kPerLane, (lane + 1) * kPerLane,
      [&](int i, int e) { return part[int64_t(i) * kD + e]; },
      [&](int e, float x) { out.o[row * kD + e] = __float2bfloat16(x); });
  if (lane == 0) out.lse[row] = merged;
}

/// Enqueues the merge when the plan has more than one split (no-op otherwise).
template <int kD>
void launch_merge_splits(const SplitOut& out, const int32_t* seq_lens, int64_t rows,
                         int64_t rows_per_seq, cudaStream_t stream) {
  if (out.plan.max_splits == 1) return;
  const auto blocks = static_cast<unsigned>((rows + kMergeWarps - 1) / kMergeWarps);
  merge_splits_kernel<kD>
      <<<blocks, kMergeWarps * 32, 0, stream>>>(out, seq_lens, rows, rows_per_seq);
  KLAB_CHECK_LAUNCH();
}

/// f.template operator()<kD>() for D = 64, 128 or 256 (split_kv_variant refuses others).
template <class F>
void with_head_dim(int64_t d, F&& f) {
  switch (d) {
    case 64:
      return f.template operator()<64>();
    case 128:
      return f.template operator()<128>();
    default:
      return f.template operator()<256>();
  }
}

/// A split-KV rung (v01 with one split, v02, v03): make(p, b) resolves the pointers and the plan
/// into a launch object whose operator()(cudaStream_t) enqueues the kernel and the merge (once,
/// in prepare); plan(p) sizes the workspace; limits(p) adds the rung's own refusals to the head
/// dimensions every rung takes. min_sm: 80 for mma.sync and cp.async, 90 for the TMA rungs;
/// kv: the KV cache's dtype.
template <class Make, class Plan, class Limits>
Variant split_kv_variant(const std::string& rung, std::string summary, Make make, Plan plan,
                         Limits limits, int min_sm = 80, DType kv = DType::bf16) {
  // Launch objects that can start programmatically (TmaPagesLaunch) take the request.
  auto made = [make](const Problem& p, Buffers& b, const LaunchArgs& args) {
    auto launch = make(p, b);
    if constexpr (requires { launch.programmatic; }) launch.programmatic = args.programmatic;
    // Traceable launch objects (tma_pages_kernel.cuh) run their traced kernels for `klab timeline`.
    if constexpr (requires { launch.trace_into(nullptr); })
      if (unsigned long long* slots = active_phase_trace()) launch.trace_into(slots);
    return launch;
  };
  // Launch objects that keep what the host builds in the workspace (v16's tensor maps, v28's work
  // list) copy it there: prepare once, waiting for the copy; the launch without prepare before
  // its kernel.
  auto upload = [](const auto& launch, cudaStream_t stream, bool wait) {
    if constexpr (requires { launch.upload(stream, wait); }) launch.upload(stream, wait);
  };
  Variant v = gpu_variant_of("decode_attention." + rung, std::move(summary), min_sm, {kv},
                             [made, upload](const Problem& p, Buffers& b, const LaunchArgs& args) {
                               const auto stream = reinterpret_cast<cudaStream_t>(args.stream);
                               const auto launch = made(p, b, args);
                               upload(launch, stream, false);
                               launch(stream);
                             });
  v.prepare = [made, upload](const Problem& p, Buffers& b,
                             const LaunchArgs& args) -> PreparedLaunch {
    auto launch = made(p, b, args);
    upload(launch, reinterpret_cast<cudaStream_t>(args.stream), true);
    return [launch](Stream stream) { launch(reinterpret_cast<cudaStream_t>(stream)); };
  };
  v.can_implement = [rung, limits](const Problem& p) {
    const int64_t d = dims_of(p).d;
    if (d != 64 && d != 128 && d != 256)
      return Status::no("decode_attention." + rung + ": d must be 64, 128 or 256");
    return limits(p);
  };
  v.workspace_bytes = [plan](const Problem& p) {
    const Dims s = dims_of(p);
    return sizeof(float) * static_cast<size_t>(plan(p).workspace_floats(s.rows(), s.d));
  };
  return v;
}

}  // namespace klab::decode_attention

#pragma once
// v36's merge: the splits' partials merged by a second kernel, launched programmatically after the
// split kernel (pdl.cuh), instead of by the row group's last CTA inside it. The split kernel calls
// allow_dependent_launch() at its start, so this kernel's CTAs are scheduled while it streams and
// wait in grid_dependency_wait() for its end, which also makes every partial it stored visible:
// no fence, no arrival counter and no last-CTA election. A CTA merges one query row with kWarps
// warps: warp w takes the splits w, w + kWarps, ..; each lane holds kD / 32 elements of the row
// (a float4 at D = 128). A batch's loads (each split's lse and the lane's elements) are issued
// together, so at 32 splits and eight warps a row costs one L2 round trip, where the in-launch
// merges chain two to six after the arrival; the warps' running (max, sum, weighted row) are
// combined through shared memory at the end.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/split_kv.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/pdl.cuh"

namespace klab::decode_attention {

namespace dependent_merge_detail {

constexpr int kWarps = 8;  // a row's warps: 32 splits in one batch of four loads a lane
constexpr int kBatch = 4;  // splits a warp loads together

/// kD / 32 consecutive floats of a partial row, loaded through L2 (the split kernel stored them
/// there): float2 at D = 64, float4 at 128, two float4 at 256.
template <int kD>
struct LaneSlice {
  static constexpr int kN = kD / 32;
  static_assert(kN == 2 || kN % 4 == 0, "D = 64, 128 or 256");
  float v[kN];

  __device__ __forceinline__ void load(const float* row, int lane) {
    const float* at = row + lane * kN;
    if constexpr (kN == 2) {
      const float2 x = __ldcg(reinterpret_cast<const float2*>(at));
      v[0] = x.x;
      v[1] = x.y;
    } else {
#pragma unroll
      for (int j = 0; j < kN / 4; ++j) {
        const float4 x = __ldcg(reinterpret_cast<const float4*>(at) + j);
        v[4 * j] = x.x;
        v[4 * j + 1] = x.y;
        v[4 * j + 2] = x.z;
        v[4 * j + 3] = x.w;
      }
    }
  }
};

}  // namespace dependent_merge_detail

/// One CTA a query row (flat (bi * qlen + t) * hq + h, `rows_per_seq` a sequence): rows whose
/// sequence has more than one split get o and lse from their partials (the split kernel wrote the
/// others). The row's weights are exp(lse_i - lse) as lse_merge.hpp defines them; an empty split
/// (lse -inf) weighs nothing.
template <int kD>
__global__ void __launch_bounds__(dependent_merge_detail::kWarps * 32)
    dependent_merge_kernel(SplitOut out, const int32_t* __restrict__ seq_lens,
                           int64_t rows_per_seq) {
  using namespace dependent_merge_detail;
  using Slice = LaneSlice<kD>;
  constexpr int kN = Slice::kN;
  __shared__ float s_acc[kWarps][kD];
  __shared__ float s_m[kWarps], s_s[kWarps];
  const int64_t row = blockIdx.x;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  // The length before the wait: the split kernel allows this launch only after its own wait, so
  // whatever ran before it has ended, and it does not write the lengths.
  const int splits = out.plan.splits_of(seq_lens[row / rows_per_seq]);
  device::grid_dependency_wait();  // the split kernel's end: its partials are visible
  if (splits == 1) return;         // its one split wrote o and lse
  const float* lse = out.ws_lse + out.plan.partial_index(row, 0);
  const float* part = out.ws_o + out.plan.partial_index(row, 0) * kD;
  // The warp's running merge (lse_merge.hpp's LseMergeState) of its splits.
  device::LseMergeState<kN> st;
#pragma unroll 1
  for (int i0 = warp; i0 < splits; i0 += kWarps * kBatch) {
    float l[kBatch];
    Slice x[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {  // the batch's loads issued together
      const int i = min(i0 + j * kWarps, splits - 1);
      l[j] = __ldcg(lse + i);
      x[j].load(part + int64_t(i) * kD, lane);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j)
      if (i0 + j * kWarps < splits) st.add(l[j], 1.f, x[j].v);  // past the last: loaded, not added
  }
#pragma unroll
  for (int e = 0; e < kN; ++e) s_acc[warp][lane * kN + e] = st.acc[e];
  if (lane == 0) {
    s_m[warp] = st.m;
    s_s[warp] = st.s;
  }
  __syncthreads();
  // Threads 0 .. kD / 4 - 1: float4 c4 of the row, the warps' states joined in warp order.
  const int c4 = static_cast<int>(threadIdx.x);
  if (c4 >= kD / 4) return;
  device::LseMergeState<4> merged;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) merged.add(s_m[w], s_s[w], &s_acc[w][4 * c4]);
  store_merged4(out.o, out.lse, row, kD, c4,
                make_float4(merged.out(0), merged.out(1), merged.out(2), merged.out(3)),
                merged.lse());
}

/// Enqueues v36's merge after the split kernel on `stream`, programmatically (the split kernel
/// allows it at its start), when the plan splits a sequence (no-op otherwise).
template <int kD>
void launch_dependent_merge(const SplitOut& out, const int32_t* seq_lens, int64_t rows,
                            int64_t rows_per_seq, cudaStream_t stream) {
  if (out.plan.max_splits == 1) return;
  KLAB_CHECK(rows <= INT32_MAX, "decode_attention: the merge's grid holds more than 2^31 - 1 rows");
  const device::LaunchAttributes attrs(0, /*programmatic*/ true);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows));
  config.blockDim = dim3(dependent_merge_detail::kWarps * 32);
  config.stream = stream;
  attrs.apply(config);
  KLAB_CUDA_CHECK(
      cudaLaunchKernelEx(&config, dependent_merge_kernel<kD>, out, seq_lens, rows_per_seq));
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::decode_attention

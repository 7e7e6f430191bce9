#pragma once
// A split CTA's rows merged over its math warps, the way v13's push merge does it (weights once a
// row, a float4 a thread), and v32's compact counter tail: the CTA's rows stored as its split's
// partial that way, and the merging CTA's pass over the splits' partials with each row's weights
// computed once into shared memory (merge_partials computes them again for every float4).
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "klab/device/lse_merge.hpp"
#include "klab/device/smem.cuh"

namespace klab::decode_attention {

/// After each math warp left its rows' running max (log2 units) and sum in s_max[w][r],
/// s_sum[w][r]: thread r < rows turns them into each warp's weight in the CTA's normalised row
/// (written over s_max[w][r]) and the row's natural-log lse (into s_sum[0][r]). The barriers
/// before (every warp's partial stored) and after are the caller's.
template <int kWarps>
__device__ __forceinline__ void cta_row_weights(float (*s_max)[GqaMmaConfig::kRows],
                                                float (*s_sum)[GqaMmaConfig::kRows], int rows) {
  const int r = static_cast<int>(threadIdx.x);
  if (r >= rows) return;
  float mx = -INFINITY;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_max[w][r]);
  float f[kWarps], sum = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const float ws = s_sum[w][r];
    f[w] = ws > 0.f ? exp2f(s_max[w][r] - mx) : 0.f;
    sum += ws * f[w];
  }
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) s_max[w][r] = f[w] * inv;
  s_sum[0][r] = sum > 0.f ? (mx + log2f(sum)) * 0.69314718055994531f : -INFINITY;
}

/// Float4 c4 of the CTA's normalised row r: the warps' partials (s_o: (kWarps, kRows, stride)
/// fp32) under the weights cta_row_weights left in s_max.
template <int kD, int kWarps>
__device__ __forceinline__ float4 cta_row4(const float* s_o,
                                           const float (*s_max)[GqaMmaConfig::kRows], int r,
                                           int c4) {
  constexpr int kRows = GqaMmaConfig::kRows;
  constexpr int kStride = static_cast<int>(GqaMmaConfig::merge_stride(kD));
  static_assert(kStride % 4 == 0, "float4 rows of the warps' partials");
  float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const float f = s_max[w][r];
    const float4 v =
        device::ld_shared_f32x4(device::smem_addr(s_o + (w * kRows + r) * kStride + 4 * c4));
    x.x += f * v.x;
    x.y += f * v.y;
    x.z += f * v.z;
    x.w += f * v.w;
  }
  return x;
}

/// v32: the CTA's rows (rows of the row group at row0) as its split's partial in the workspace
/// (normalised fp32 O and natural-log lse, merge_partials' format), or as the output itself when
/// the sequence has one split. Every thread calls it after the barrier that ends the stages' use
/// and the warps' partials' stores (one barrier inside, one before).
template <int kD, int kWarps, int kThreads>
__device__ __forceinline__ void store_cta_rows(const float* s_o,
                                               float (*s_max)[GqaMmaConfig::kRows],
                                               float (*s_sum)[GqaMmaConfig::kRows],
                                               const SplitOut& out, int64_t bi, int hk, int row0,
                                               int rows, int split, int splits,
                                               const GqaGeometry& g) {
  constexpr int kVec = kD / 4;
  const int tid = static_cast<int>(threadIdx.x);
  __syncthreads();  // every warp's partial stored
  cta_row_weights<kWarps>(s_max, s_sum, rows);
  __syncthreads();
#pragma unroll 1
  for (int e = tid; e < rows * kVec; e += kThreads) {
    const int r = e / kVec, c4 = e % kVec;
    const float4 x = cta_row4<kD, kWarps>(s_o, s_max, r, c4);
    out.store_o4(global_row(bi, hk, row0 + r, g), split, splits, kD, c4, x, s_sum[0][r]);
  }
}

/// v32: the merge of a row group's `splits` partials by the CTA that arrived last, each row's
/// weights computed once: a warp a row turns the splits' lse (lse_at(i, r), read through L2) into
/// normalised weights in s_w[r * splits + i] (lanes over the splits) and the row's lse in s_lse[r];
/// then each thread sums a float4 of a row over the splits, kUnroll loads in flight, and
/// store(r, c4, o, lse) writes it. Compact loops: this code runs once a launch, fetched as it goes.
/// s_w holds rows x splits floats; threads 0 .. kThreads - 1 call it; one barrier inside.
template <int kD, int kThreads, int kUnroll, class LseAt, class OAt, class Store>
__device__ __forceinline__ void merge_counted_rows(int rows, int splits, LseAt&& lse_at, OAt&& o_at,
                                                   Store&& store, float* s_w, float* s_lse) {
  constexpr int kWarps = kThreads / 32, kVec = kD / 4;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
#pragma unroll 1
  for (int r = warp; r < rows; r += kWarps) {
    float m = -INFINITY;
#pragma unroll 1
    for (int i = lane; i < splits; i += 32) m = fmaxf(m, lse_at(i, r));
#pragma unroll
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float s = 0.f;
#pragma unroll 1
    for (int i = lane; i < splits; i += 32) {
      const float w = device::lse_merge_scale(lse_at(i, r), m);
      s_w[r * splits + i] = w;
      s += w;
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    const float inv = s > 0.f ? 1.f / s : 0.f;
#pragma unroll 1  // each lane rescales the weights it wrote
    for (int i = lane; i < splits; i += 32) s_w[r * splits + i] *= inv;
    if (lane == 0) s_lse[r] = s > 0.f ? m + logf(s) : -INFINITY;
  }
  __syncthreads();
#pragma unroll 1
  for (int e = tid; e < rows * kVec; e += kThreads) {
    const int r = e / kVec, c4 = e % kVec;
    const float* w = s_w + r * splits;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll kUnroll
    for (int i = 0; i < splits; ++i) {
      const float wi = w[i];
      const float4 v = o_at(i, r, c4);
      x.x += wi * v.x;
      x.y += wi * v.y;
      x.z += wi * v.z;
      x.w += wi * v.w;
    }
    store(r, c4, x, s_lse[r]);
  }
}

}  // namespace klab::decode_attention

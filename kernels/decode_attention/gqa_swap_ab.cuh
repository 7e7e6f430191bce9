#pragma once
// The warp stages of v09 (e4m3 KV) and v10 (bf16 KV), operands swapped: the warp's 16 keys are
// the M of mma.sync m16n8k16 and the CTA's query rows its N, in kNT n8 tiles (1 when a KV head
// has at most 8 query rows, Qwen3-8B's 4 a token; else 2). gqa_mma.cuh and gqa_mma_e4m3.cuh pad
// the rows to M = 16, so at 4 rows three quarters of their tensor work, score registers and
// softmax instructions are padding; here S^T = K Q^T and O^T = V^T P^T take half the mma and half
// the exponentials. Q (the B operand of S^T) lives in registers for the whole chunk.
// - K (S^T's A operand, m = key, k = dim). bf16: ldmatrix.x4 of (keys 0-7, 8-15) x (dims 0-7,
//   8-15) is A as it is. e4m3: the ldmatrix.x4 of gqa_mma_e4m3.cuh gives thread t key t / 4 (and
//   + 8 from the next matrix), dims 4c .. 4c + 3 (c = t % 4) of a 16-byte chunk; as f16x2 words
//   they are A's k slots (2c, 2c + 1) := dims 4c, 4c + 1 and (2c + 8, 2c + 9) := dims 4c + 2,
//   4c + 3, and Q's fragments take the same order (load_q_tile_e4m3's).
// - P^T (the B operand of O^T, k = key, n = row): the score accumulator holds (key g, rows 2c,
//   2c + 1); one movmatrix.trans per 8 keys gives B's (keys 2c, 2c + 1, row g).
// - V^T (O^T's A operand, m = dim, k = key). bf16: ldmatrix.x4.trans of (keys 0-7, 8-15) x
//   (dims 0-7, 8-15) is A, row r dim r. e4m3: ldmatrix.trans and the byte permute of
//   gqa_mma_e4m3.cuh give thread t, for dims 2r and 2r + 1 of a chunk (r = t / 4), keys 2c and
//   2c + 1: A's row r is dim 2r, row r + 8 dim 2r + 1 (SwapAbWarpState's kPairedDims).
// Each row's scores of the warp's 16 keys sit in the 8 threads of a column (lanes c, c + 4, ..):
// the softmax's reductions take three shuffles where the padded layout takes two.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/gqa_mma_e4m3.cuh"
#include "klab/device/fp8_convert.cuh"
#include "klab/device/mma_sm80.cuh"

namespace klab::decode_attention {

/// A warp's running state, operands swapped: O^T's kD x 8 kNT accumulator (acc[j][n]: rows
/// 8n + 2 (lane % 4) + {0, 1}; dims 16j + r in c0, c1 and 16j + r + 8 in c2, c3 (r = lane / 4),
/// or with kPairedDims (e4m3) 16j + 2r and 16j + 2r + 1) and the base-2 online softmax of the
/// thread's 2 kNT rows (row_max and the column's partial sums).
template <int kD, int kNT>
struct SwapAbWarpState {
  float acc[kD / 16][kNT][4];
  float row_max[kNT][2], row_sum[kNT][2];

  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int j = 0; j < kD / 16; ++j)
#pragma unroll
      for (int n = 0; n < kNT; ++n) acc[j][n][0] = acc[j][n][1] = acc[j][n][2] = acc[j][n][3] = 0.f;
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      row_max[n][0] = row_max[n][1] = -INFINITY;
      row_sum[n][0] = row_sum[n][1] = 0.f;
    }
  }
  __device__ __forceinline__ void scale(float x) {
#pragma unroll
    for (int j = 0; j < kD / 16; ++j)
#pragma unroll
      for (int n = 0; n < kNT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][n][e] *= x;
  }
};

/// Q's B fragments of the rows from row0 (8 kNT of them, zeros past the group's rows), for row
/// row0 + 8n + lane / 4 and c = lane % 4: bf16 KV (kElem 2), b[j][n] = (dims 16j + 2c, + 1 |
/// 16j + 8 + 2c, + 1) as they are; e4m3 (kElem 1), (dims 16j + 4c, + 1 | 16j + 4c + 2, + 3) in
/// f16.
template <int kD, int kNT, int kElem>
struct SwapAbQ {
  uint32_t b[kD / 16][kNT][2];

  __device__ __forceinline__ void load(const __nv_bfloat16* __restrict__ q, int64_t bi, int hk,
                                       int row0, const GqaGeometry& g, int lane) {
    const int c = lane % 4;
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      const int r = row0 + 8 * n + lane / 4;
      const bool valid = r < g.rows_per_head;
      const __nv_bfloat16* row = q + (valid ? global_row(bi, hk, r, g) * kD : 0);
#pragma unroll
      for (int j = 0; j < kD / 16; ++j) {
        if constexpr (kElem == 2) {
          const __nv_bfloat16* src = row + 16 * j + 2 * c;
          b[j][n][0] = valid ? *reinterpret_cast<const uint32_t*>(src) : 0u;
          b[j][n][1] = valid ? *reinterpret_cast<const uint32_t*>(src + 8) : 0u;
        } else {
          const uint2 v =
              valid ? *reinterpret_cast<const uint2*>(row + 16 * j + 4 * c) : make_uint2(0, 0);
          const __half2 lo =
              __float22half2_rn(__bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.x)));
          const __half2 hi =
              __float22half2_rn(__bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.y)));
          b[j][n][0] = *reinterpret_cast<const uint32_t*>(&lo);
          b[j][n][1] = *reinterpret_cast<const uint32_t*>(&hi);
        }
      }
    }
  }
};

/// The causal limit of the thread's rows (row0 + 8n + 2 (lane % 4) + e): keys below
/// min(end, len - qlen + t + 1); padding rows take the last token's (as row_limits).
template <int kNT>
__device__ __forceinline__ void swap_ab_row_limits(int64_t (&lim)[kNT][2], int lane, int row0,
                                                   int64_t end, int64_t len, const GqaGeometry& g) {
#pragma unroll
  for (int n = 0; n < kNT; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int rt = row0 + 8 * n + 2 * (lane % 4) + e;
      const int t = rt < g.rows_per_head ? rt / g.group : g.qlen - 1;
      lim[n][e] = min(end, len - g.qlen + t + 1);
    }
}

/// The masks and online softmax of the warp's 16 keys in the swapped layout, of kTiles stages at
/// once (v15: two; s[t][n]: stage t's keys key_base[t] + key_row + g (c0, c1) and + 8 (c2, c3),
/// g = lane / 4, of rows 8n + 2c + {0, 1}): online_softmax_16's rules (the FA4 threshold, a
/// warp-uniform rescale), the reductions over a column's 8 lanes, one set for all kTiles stages.
template <int kD, int kNT, int kTiles>
__device__ __forceinline__ void online_softmax_swap_ab(
    SwapAbWarpState<kD, kNT>& st, float (&s)[kTiles][kNT][4], int lane, int key_row,
    const int64_t (&key_base)[kTiles], const int64_t (&lim)[kNT][2], float scale_log2) {
  float mx[kNT][2];
  bool grow = false;
#pragma unroll
  for (int n = 0; n < kNT; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float m = -INFINITY;
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        const int64_t key0 = key_base[t] + key_row + lane / 4;
        float& x0 = s[t][n][e];
        float& x1 = s[t][n][2 + e];
        x0 = key0 < lim[n][e] ? x0 * scale_log2 : -INFINITY;
        x1 = key0 + 8 < lim[n][e] ? x1 * scale_log2 : -INFINITY;
        m = t == 0 ? fmaxf(x0, x1) : fmaxf(m, fmaxf(x0, x1));
      }
      mx[n][e] = m;  // this lane's share of the column; its 8 lanes' max where it is used
      grow |= m > st.row_max[n][e] + kRescaleThreshold;  // -inf + 8 is -inf: a first key counts
    }
  // A row's running max is the same in its column's 8 lanes, so the vote over each lane's own
  // max is the vote over the columns' maxima: the reductions wait for a rescale, the rare case
  // (as attention's softmax_block).
  if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
    for (int n = 0; n < kNT; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float m = mx[n][e];
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
        const float new_max = fmaxf(st.row_max[n][e], m);
        const float alpha = exp2f(st.row_max[n][e] - (new_max == -INFINITY ? 0.f : new_max));
        st.row_max[n][e] = new_max;
        st.row_sum[n][e] *= alpha;
#pragma unroll
        for (int j = 0; j < kD / 16; ++j) {
          st.acc[j][n][e] *= alpha;
          st.acc[j][n][2 + e] *= alpha;
        }
      }
  }
#pragma unroll
  for (int n = 0; n < kNT; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float base = st.row_max[n][e] == -INFINITY ? 0.f : st.row_max[n][e];
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        s[t][n][e] = exp2f(s[t][n][e] - base);
        s[t][n][2 + e] = exp2f(s[t][n][2 + e] - base);
        st.row_sum[n][e] += s[t][n][e] + s[t][n][2 + e];
      }
    }
}

/// One warp's 16 keys of a stage (stage rows key_row .. key_row + 15, keys key_base + key_row
/// + ...), swapped: S^T = K Q^T, masks and online softmax, O^T += V^T P^T. K and V as e4m3 tiles
/// laid out as KvTile::offset says (16-byte chunks); scale_log2 with K's scale folded in.
/// kTiles stages at once (v15: two, sk[t], sv[t], key_base[t]): their S^T products are
/// independent, so they interleave; one softmax's reductions and vote serve both.
template <int kD, int kNT, class KvTile, int kTiles = 1>
__device__ __forceinline__ void gqa_swap_ab_stage_e4m3(
    SwapAbWarpState<kD, kNT>& st, const SwapAbQ<kD, kNT, 1>& q, const uint32_t (&sk)[kTiles],
    const uint32_t (&sv)[kTiles], int lane, int key_row, const int64_t (&key_base)[kTiles],
    const int64_t (&lim)[kNT][2], float scale_log2) {
  static_assert(kD % 32 == 0, "32 dims an ldmatrix.x4 of FP8 rows");
  // Matrix i of an x4: keys key_row + (i % 2) * 8 + lane % 8, 16-byte chunk 2 kk + i / 2.
  const int mat_row = key_row + (lane / 8 % 2) * 8 + lane % 8, mat_chunk = lane / 16;
  float s[kTiles][kNT][4];
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int n = 0; n < kNT; ++n) s[t][n][0] = s[t][n][1] = s[t][n][2] = s[t][n][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < kD / 32; ++kk)
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      uint32_t kb[4];
      device::ldmatrix_x4(kb, sk[t] + KvTile::offset(mat_row, 2 * kk + mat_chunk));
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // dims 16j .. 16j + 15, j = 2 kk + half
        uint32_t a[4];
        device::e4m3x4_to_f16x2x2(kb[2 * half], a[0], a[2]);      // key g
        device::e4m3x4_to_f16x2x2(kb[2 * half + 1], a[1], a[3]);  // key g + 8
#pragma unroll
        for (int n = 0; n < kNT; ++n) {
          const uint32_t b[2] = {q.b[2 * kk + half][n][0], q.b[2 * kk + half][n][1]};
          device::mma_m16n8k16_f16(s[t][n], a, b);
        }
      }
    }
  online_softmax_swap_ab(st, s, lane, key_row, key_base, lim, scale_log2);
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    uint32_t pb[kNT][2];  // P^T's B fragments: (keys 2c, 2c + 1 | 2c + 8, 2c + 9; row g) in f16
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      pb[n][0] = device::movmatrix_trans(device::pack2<__half>(s[t][n][0], s[t][n][1]));
      pb[n][1] = device::movmatrix_trans(device::pack2<__half>(s[t][n][2], s[t][n][3]));
    }
#pragma unroll
    for (int nd = 0; nd < kD / 32; ++nd) {
      uint32_t vb[4];
      device::ldmatrix_x4_trans(vb, sv[t] + KvTile::offset(mat_row, 2 * nd + mat_chunk));
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // chunk j = 2 nd + half
        // Rows r (dim 2r) and r + 8 (dim 2r + 1): keys 0-7 in a0, a1, keys 8-15 in a2, a3.
        uint32_t a[4];
        e4m3_v_key_pairs(vb[2 * half], a[0], a[1]);
        e4m3_v_key_pairs(vb[2 * half + 1], a[2], a[3]);
#pragma unroll
        for (int n = 0; n < kNT; ++n) device::mma_m16n8k16_f16(st.acc[2 * nd + half][n], a, pb[n]);
      }
    }
  }
}

/// gqa_swap_ab_stage_e4m3 for bf16 K and V tiles (KvTile::offset's 16-byte chunks of 8 dims).
template <int kD, int kNT, class KvTile>
__device__ __forceinline__ void gqa_swap_ab_stage_bf16(
    SwapAbWarpState<kD, kNT>& st, const SwapAbQ<kD, kNT, 2>& q, uint32_t sk, uint32_t sv, int lane,
    int key_row, int64_t key_base, const int64_t (&lim)[kNT][2], float scale_log2) {
  // K's x4: matrices (keys 0-7, chunk 2kk), (8-15, 2kk), (0-7, 2kk + 1), (8-15, 2kk + 1): A's a0-a3.
  const int k_row = key_row + (lane / 8 % 2) * 8 + lane % 8, k_chunk = lane / 16;
  // V's x4.trans: (keys 0-7, chunk 2j), (0-7, 2j + 1), (8-15, 2j), (8-15, 2j + 1): V^T's a0-a3.
  const int v_row = key_row + (lane / 16) * 8 + lane % 8, v_chunk = lane / 8 % 2;
  float s[1][kNT][4];
#pragma unroll
  for (int n = 0; n < kNT; ++n) s[0][n][0] = s[0][n][1] = s[0][n][2] = s[0][n][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    uint32_t a[4];
    device::ldmatrix_x4(a, sk + KvTile::offset(k_row, 2 * kk + k_chunk));
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      const uint32_t b[2] = {q.b[kk][n][0], q.b[kk][n][1]};
      device::mma_m16n8k16_bf16(s[0][n], a, b);
    }
  }
  const int64_t key_bases[1] = {key_base};
  online_softmax_swap_ab(st, s, lane, key_row, key_bases, lim, scale_log2);
  uint32_t pb[kNT][2];  // P^T's B fragments: (keys 2c, 2c + 1 | 2c + 8, 2c + 9; row g) in bf16
#pragma unroll
  for (int n = 0; n < kNT; ++n) {
    pb[n][0] = device::movmatrix_trans(device::pack2<__nv_bfloat16>(s[0][n][0], s[0][n][1]));
    pb[n][1] = device::movmatrix_trans(device::pack2<__nv_bfloat16>(s[0][n][2], s[0][n][3]));
  }
#pragma unroll
  for (int j = 0; j < kD / 16; ++j) {
    uint32_t a[4];
    device::ldmatrix_x4_trans(a, sv + KvTile::offset(v_row, 2 * j + v_chunk));
#pragma unroll
    for (int n = 0; n < kNT; ++n) device::mma_m16n8k16_bf16(st.acc[j][n], a, pb[n]);
  }
}

/// The warp's partial for merge_warp_rows: its rows' (max, sum) into s_max_w / s_sum_w (the
/// sums first reduced over a column's 8 lanes) and O's rows into s_o_w (rows of stride floats);
/// kPairedDims: the e4m3 stage's dims (SwapAbWarpState).
template <bool kPairedDims, int kD, int kNT>
__device__ __forceinline__ void store_swap_ab_partial(SwapAbWarpState<kD, kNT>& st, int lane,
                                                      float* s_o_w, int stride, float* s_max_w,
                                                      float* s_sum_w) {
  const int r = lane / 4, c = lane % 4;
#pragma unroll
  for (int n = 0; n < kNT; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float sum = st.row_sum[n][e];
      sum += __shfl_xor_sync(0xffffffffu, sum, 4);
      sum += __shfl_xor_sync(0xffffffffu, sum, 8);
      sum += __shfl_xor_sync(0xffffffffu, sum, 16);
      const int row = 8 * n + 2 * c + e;
      if (r == 0) {
        s_max_w[row] = st.row_max[n][e];
        s_sum_w[row] = sum;
      }
      float* o = s_o_w + row * stride;
#pragma unroll
      for (int j = 0; j < kD / 16; ++j) {
        if constexpr (kPairedDims) {
          *reinterpret_cast<float2*>(o + 16 * j + 2 * r) =
              make_float2(st.acc[j][n][e], st.acc[j][n][2 + e]);
        } else {
          o[16 * j + r] = st.acc[j][n][e];
          o[16 * j + r + 8] = st.acc[j][n][2 + e];
        }
      }
    }
}

}  // namespace klab::decode_attention

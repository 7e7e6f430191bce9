#pragma once
// gqa_mma.cuh's warp stage for an e4m3 KV cache (v08): K and V stay FP8 in shared memory (a
// stage's 64 keys of D bytes each, half of bf16's) and become f16 tensor-core operands in
// registers; S = Q K^T and P V run on mma.sync m16n8k16 with f16 inputs and fp32 accumulators.
// Hopper has no FP8 ldmatrix, so each operand comes from the b16 ldmatrix, whose fragments give a
// thread four bytes where f16's would give two elements; the reduction or output index is
// permuted instead of moving bytes between threads:
// - K (S's B operand, k = head dimension): ldmatrix (no .trans) of 8 keys x 16 bytes gives
//   thread t key t / 4, dims 4c .. 4c + 3 (c = t % 4); as f16x2 words they are m16n8k16's b0
//   (k slots 2c, 2c + 1 := dims 4c, 4c + 1) and b1 (slots 2c + 8, 2c + 9 := dims 4c + 2, 4c + 3):
//   one 8x8 matrix is a whole n8 x k16 fragment. S sums over k, so Q's A fragment only has to
//   follow the same order: Q's tile holds each 16 dims permuted (load_q_tile_e4m3), and the
//   ordinary ldmatrix of A reads it.
// - V (P V's B operand, k = key, n = dim): ldmatrix.trans of 8 keys x 16 bytes gives thread t,
//   as b16 units, (key 2c, dims 2r and 2r + 1) and (key 2c + 1, the same dims), r = t / 4; a
//   byte permute makes (key 2c, key 2c + 1) pairs of dim 2r and of dim 2r + 1: the b0 halves of
//   two n8 fragments, one over the 16 dims' even columns, one over their odd ones. So acc[2j]
//   holds dims 16j + 4 tq + {0, 2} and acc[2j + 1] dims 16j + 4 tq + {1, 3} (store_gqa_partial's
//   kE4m3Columns order): per 32 dims one ldmatrix.x4 where bf16 takes two.
// Q is converted to f16 unscaled (exact for |q| in f16's normal range, 2^-14 .. 65504, which
// the family's error model states), K's scale folds into the scores' scale and V's into the
// output, both per KV head in fp32; P is rounded to f16 (finer than bf16 above 2^-14; below, an
// absolute 2^-25, which the error model adds).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "klab/device/fp8_convert.cuh"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/smem.cuh"

namespace klab::decode_attention {

/// Q's kRows rows of KV head hk from row0 as f16 (zeros past the group's rows) into the tile at
/// sq (tile_offset's layout), each 16 dims permuted to the e4m3 K fragment's order: dims
/// 16j + 4c + e go to columns 16j + 2c + e (e < 2) and 16j + 8 + 2c + e - 2 (e >= 2). Plain
/// stores: the caller's barrier publishes them.
template <int kD>
__device__ __forceinline__ void load_q_tile_e4m3(uint32_t sq, const __nv_bfloat16* __restrict__ q,
                                                 int64_t bi, int hk, int row0, const GqaGeometry& g,
                                                 int tid) {
  constexpr int kQuads = kD / 4;  // 4 consecutive dims (8 bytes of bf16) a step
  for (int c = tid; c < GqaMmaConfig::kRows * kQuads; c += GqaMmaConfig::kThreads) {
    const int r = c / kQuads, d0 = (c % kQuads) * 4;
    uint2 v = make_uint2(0, 0);
    if (row0 + r < g.rows_per_head)
      v = *reinterpret_cast<const uint2*>(q + global_row(bi, hk, row0 + r, g) * kD + d0);
    const __nv_bfloat162 x0 = *reinterpret_cast<const __nv_bfloat162*>(&v.x);
    const __nv_bfloat162 x1 = *reinterpret_cast<const __nv_bfloat162*>(&v.y);
    const __half2 h0 = __float22half2_rn(__bfloat1622float2(x0));
    const __half2 h1 = __float22half2_rn(__bfloat1622float2(x1));
    const int j = d0 / 16, quad = (d0 % 16) / 4;    // dims 16j + 4 quad .. + 3
    const int lo = 16 * j + 2 * quad, hi = lo + 8;  // their columns
    device::st_shared_u32(sq + tile_offset<kD>(r, lo / 8) + (lo % 8) * 2,
                          *reinterpret_cast<const uint32_t*>(&h0));
    device::st_shared_u32(sq + tile_offset<kD>(r, hi / 8) + (hi % 8) * 2,
                          *reinterpret_cast<const uint32_t*>(&h1));
  }
}

/// One b32 of V's ldmatrix.trans over e4m3 rows (bytes: key 2c dims 2r, 2r + 1, then key 2c + 1
/// the same dims) as two f16x2 words of key pairs: (keys 2c, 2c + 1) of dim 2r in `even`, of dim
/// 2r + 1 in `odd`.
__device__ __forceinline__ void e4m3_v_key_pairs(uint32_t w, uint32_t& even, uint32_t& odd) {
  device::e4m3x4_to_f16x2x2(__byte_perm(w, 0, 0x3120), even, odd);
}

/// gqa_mma_stage for e4m3 K and V tiles (rows of kD bytes, laid out as KvTile::offset says, in
/// 16-byte chunks); Q's f16 tile from load_q_tile_e4m3; scale_log2 with K's scale folded in.
template <int kD, class KvTile>
__device__ __forceinline__ void gqa_mma_stage_e4m3(GqaWarpState<kD>& st, uint32_t sq, uint32_t sk,
                                                   uint32_t sv, int lane, int key_row,
                                                   int64_t key_base, const int64_t lim[2],
                                                   float scale_log2) {
  static_assert(kD % 32 == 0, "32 dims an ldmatrix.x4 of FP8 rows");
  // Matrix i of an x4 (lanes 8i .. 8i + 7 give its rows): keys key_row + (i % 2) * 8 + lane % 8,
  // 16-byte chunk 2 kk + i / 2.
  const int mat_row = key_row + (lane / 8 % 2) * 8 + lane % 8, mat_chunk = lane / 16;
  // S (16 rows x 16 keys) = Q K^T, 32 dims a step.
  float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
  for (int kk = 0; kk < kD / 32; ++kk) {
    uint32_t kb[4];
    device::ldmatrix_x4(kb, sk + KvTile::offset(mat_row, 2 * kk + mat_chunk));
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // dims 32kk + 16 half .. + 15: Q's k16 slice
      uint32_t a[4];
      device::ldmatrix_x4(
          a, sq + tile_offset<kD>((lane / 8 % 2) * 8 + lane % 8, (2 * kk + half) * 2 + lane / 16));
#pragma unroll
      for (int n = 0; n < 2; ++n) {  // keys 0-7, then 8-15
        uint32_t b[2];
        device::e4m3x4_to_f16x2x2(kb[2 * half + n], b[0], b[1]);
        device::mma_m16n8k16_f16(s[n], a, b);
      }
    }
  }
  online_softmax_16(st, s, lane, key_row, key_base, lim, scale_log2);
  // P (16 x 16 keys) as the A operand of P V, in f16.
  const uint32_t pa[4] = {
      device::pack2<__half>(s[0][0], s[0][1]), device::pack2<__half>(s[0][2], s[0][3]),
      device::pack2<__half>(s[1][0], s[1][1]), device::pack2<__half>(s[1][2], s[1][3])};
#pragma unroll
  for (int nd = 0; nd < kD / 32; ++nd) {
    uint32_t vb[4];
    device::ldmatrix_x4_trans(vb, sv + KvTile::offset(mat_row, 2 * nd + mat_chunk));
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // dims 16j .. 16j + 15, j = 2 nd + half
      // Keys 0-7 (b0) and 8-15 (b1) of the even and of the odd dims.
      uint32_t even[2], odd[2];
      e4m3_v_key_pairs(vb[2 * half], even[0], odd[0]);
      e4m3_v_key_pairs(vb[2 * half + 1], even[1], odd[1]);
      const int j = 2 * nd + half;
      device::mma_m16n8k16_f16(st.acc[2 * j], pa, even);
      device::mma_m16n8k16_f16(st.acc[2 * j + 1], pa, odd);
    }
  }
}

}  // namespace klab::decode_attention

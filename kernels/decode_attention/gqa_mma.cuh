#pragma once
// The grouped-query tensor-core pieces v03 and v04 share: a CTA of four warps holds one m16 tile
// of a KV head's query rows (the group's query heads times the Qlen new tokens, padded to 16)
// and consumes K/V in stages of kBlockN = 64 keys, 16 a warp. Here: the geometry, Q's tile, the
// cp.async gather of one stage's K and V rows into XOR-swizzled shared tiles (the source offset of
// each row given by the rung, which knows where its page indices live), and one warp's work on a
// stage: S = Q K^T on mma.sync m16n8k16, the causal and length masks, the online softmax of its
// two rows per thread in registers (exp2, scores scaled by scale * log2 e), P rounded to bf16
// straight from the score accumulators into the A fragment of P V, fp32 accumulation.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/family.hpp"
#include "kernels/decode_attention/rung_plans.hpp"
#include "kernels/decode_attention/split_kv.cuh"
#include "klab/device/cp_async.cuh"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/smem.cuh"

namespace klab::decode_attention {

struct GqaGeometry {
  int qlen, hq, hkv, group, rows_per_head, row_tiles;
  int64_t page, max_pages;
  int page_shift;    ///< log2(page) when page is a power of two, else -1 (divide)
  float scale_log2;  ///< scale * log2(e): scores in base 2
};

inline GqaGeometry gqa_geometry(const Dims& s) {
  int shift = -1;
  for (int k = 0; k < 31; ++k)
    if ((int64_t(1) << k) == s.page) shift = k;
  return {static_cast<int>(s.qlen),
          static_cast<int>(s.hq),
          static_cast<int>(s.hkv),
          static_cast<int>(s.group()),
          static_cast<int>(s.group() * s.qlen),
          static_cast<int>(GqaMmaConfig::row_tiles(s)),
          s.page,
          s.max_pages(),
          shift,
          static_cast<float>(s.scale() * 1.4426950408889634)};
}

/// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of rows of kD bf16, the chunk
/// XORed with row % 8: the 8 rows one ldmatrix matrix reads land in 8 distinct bank groups.
template <int kD>
__device__ __forceinline__ uint32_t tile_offset(int row, int chunk) {
  return uint32_t(row) * uint32_t(kD * 2) + uint32_t((chunk ^ (row & 7)) * 16);
}

/// v03's K/V stage tiles: rows of kD bf16, 16-byte chunks XORed with row % 8 (tile_offset).
template <int kD>
struct RowSwizzledTile {
  __device__ static uint32_t offset(int row, int chunk) { return tile_offset<kD>(row, chunk); }
};

/// A stage tile as the TMA's 128-byte swizzle lays it out: kRowBytes / 128 column blocks, each
/// kTileRows rows of 128 bytes (64 bf16 or 128 e4m3), 16-byte chunk c of a row stored at chunk
/// (c % 8) ^ (row % 8) of its block's row (each block 1024-byte aligned, so the swizzle's address
/// bits are the row's).
template <int kRowBytes, int kTileRows>
struct Swizzle128Tile {
  static_assert(kRowBytes % 128 == 0, "128-byte swizzled blocks");
  static constexpr uint32_t kBlockBytes = uint32_t(kTileRows) * 128;
  __device__ static uint32_t offset(int row, int chunk) {
    return uint32_t(chunk / 8) * kBlockBytes + uint32_t(row) * 128 +
           uint32_t(((chunk % 8) ^ (row & 7)) * 16);
  }
};

__device__ __forceinline__ int64_t page_of(int64_t j, const GqaGeometry& g) {
  return g.page_shift >= 0 ? j >> g.page_shift : j / g.page;
}

/// Element offset of key j's row of KV head hk in a pool (HND pages), j in pool page `page`.
__device__ __forceinline__ int64_t kv_row_offset(int64_t page, int hk, int64_t j,
                                                 const GqaGeometry& g, int d) {
  return ((page * g.hkv + hk) * g.page + (j - page_of(j, g) * g.page)) * d;
}

/// Row rt of KV head hk's query rows (token rt / group, query head hk * group + rt % group) as
/// a flat row of o: (bi * qlen + t) * hq + h.
__device__ __forceinline__ int64_t global_row(int64_t bi, int hk, int rt, const GqaGeometry& g) {
  const int t = rt / g.group, h = hk * g.group + rt % g.group;
  return (bi * g.qlen + t) * g.hq + h;
}

/// The m16 tile's geometry of the loads: each thread copies 16-byte chunk tid % kChunks of rows
/// tid / kChunks + k * kRowsPerPass, k < kPasses.
template <int kD>
struct StageCopy {
  static constexpr int kChunks = kD / 8;  // 16-byte chunks a row
  static constexpr int kRowsPerPass = GqaMmaConfig::kThreads / kChunks;
  static constexpr int kPasses = GqaMmaConfig::kBlockN / kRowsPerPass;
  static constexpr uint32_t kTileBytes = GqaMmaConfig::kBlockN * kD * 2;  // K or V of a stage
  __device__ static int row(int tid, int k) { return tid / kChunks + k * kRowsPerPass; }
};

/// Q's kRows rows of KV head hk from row0 (zeros past the group's rows) into the tile at sq
/// (plain loads: the caller's barrier publishes them).
template <int kD>
__device__ __forceinline__ void load_q_tile(uint32_t sq, const __nv_bfloat16* __restrict__ q,
                                            int64_t bi, int hk, int row0, const GqaGeometry& g,
                                            int tid) {
  constexpr int kChunks = kD / 8;
  for (int c = tid; c < GqaMmaConfig::kRows * kChunks; c += GqaMmaConfig::kThreads) {
    const int r = c / kChunks, ch = c % kChunks;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < g.rows_per_head)
      v = *reinterpret_cast<const uint4*>(q + global_row(bi, hk, row0 + r, g) * kD + ch * 8);
    device::st_shared_v4(sq + tile_offset<kD>(r, ch), v);
  }
}

/// One stage's gather: K and V rows at the same offset of their pools into the tiles at sk and
/// sv. row_offset(k, r) gives row r's element offset in the pool (pass k of this thread), or a
/// negative value for a row past the keys: zero-filled, nothing read (the pool's base stays a
/// valid address).
template <int kD, class RowOffset>
__device__ __forceinline__ void load_kv_stage(uint32_t sk, uint32_t sv,
                                              const __nv_bfloat16* __restrict__ k_cache,
                                              const __nv_bfloat16* __restrict__ v_cache, int tid,
                                              RowOffset&& row_offset) {
  using C = StageCopy<kD>;
  const int ch = tid % C::kChunks;
#pragma unroll
  for (int k = 0; k < C::kPasses; ++k) {
    const int r = C::row(tid, k);
    const int64_t off = row_offset(k, r);
    const bool valid = off >= 0;
    const int64_t src = valid ? off + ch * 8 : 0;
    device::cp_async_16(sk + tile_offset<kD>(r, ch), k_cache + src, valid);
    device::cp_async_16(sv + tile_offset<kD>(r, ch), v_cache + src, valid);
  }
}

/// A warp's running state over its keys: O's m16 x kD accumulator (n-tiles of 8 columns) and
/// the base-2 online softmax of the thread's two rows (lane / 4 and lane / 4 + 8).
template <int kD>
struct GqaWarpState {
  float acc[kD / 8][4];
  float row_max[2], row_sum[2];

  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int n = 0; n < kD / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
  }
  __device__ __forceinline__ void scale(float x) {
#pragma unroll
    for (int n = 0; n < kD / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[n][e] *= x;
  }
};

/// The running max may trail a row's true max by up to this (base 2): P's terms stay below 2^8,
/// and the accumulators are rescaled only when a score passes it (FlashAttention 4's threshold).
inline constexpr float kRescaleThreshold = 8.f;

/// The masks and the online softmax of a warp's 16 keys (stage rows key_row .. key_row + 15,
/// keys key_base + key_row + ...): keys at or past lim[h] masked for the thread's row h, s (the
/// S accumulators: keys 0-7 in s[0], 8-15 in s[1]) turned into P = exp2(s * scale_log2 - max).
/// The running max moves, and the sum and accumulators are rescaled, only when a score of some
/// row of the warp passes its row's max by kRescaleThreshold (a warp-uniform branch; late in a
/// long chunk, almost never): the max, sum and accumulators stay consistent either way (lse =
/// max + log2 sum, o = acc / sum), exactly as with a max that always follows. Shared by the
/// bf16 and e4m3 stages.
template <int kD>
__device__ __forceinline__ void online_softmax_16(GqaWarpState<kD>& st, float (&s)[2][4], int lane,
                                                  int key_row, int64_t key_base,
                                                  const int64_t lim[2], float scale_log2) {
  const int tq = lane % 4;
  // Masks and each row's max over the warp's 16 keys (a row's 16 scores sit in the 4 threads of
  // a quad).
  const int64_t key0 = key_base + key_row + 2 * tq;
  float mx[2];
  bool grow = false;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = -INFINITY;
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float& x = s[n][2 * h + c];
        x = key0 + n * 8 + c < lim[h] ? x * scale_log2 : -INFINITY;
        mx[h] = fmaxf(mx[h], x);
      }
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
    // A first key (the max -inf) always counts: -inf + 8 is -inf.
    grow |= mx[h] > st.row_max[h] + kRescaleThreshold;
  }
  if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float new_max = fmaxf(st.row_max[h], mx[h]);
      // No key yet: subtract 0, not -inf (exp2(-inf - -inf) would be NaN); the terms are 0.
      const float alpha = exp2f(st.row_max[h] - (new_max == -INFINITY ? 0.f : new_max));
      st.row_max[h] = new_max;
      st.row_sum[h] *= alpha;
#pragma unroll
      for (int n = 0; n < kD / 8; ++n) {
        st.acc[n][2 * h] *= alpha;
        st.acc[n][2 * h + 1] *= alpha;
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float base = st.row_max[h] == -INFINITY ? 0.f : st.row_max[h];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float& x = s[n][2 * h + c];
        x = exp2f(x - base);
        st.row_sum[h] += x;
      }
  }
}

/// One warp's 16 keys of a stage (stage rows key_row .. key_row + 15, keys key_base + key_row
/// + ...): S = Q K^T, keys at or past lim[h] masked for the thread's row h, the online softmax,
/// P V into the accumulator. The row sums stay per thread (the quad's partial sums) until
/// quad_row_sums. Q's tile is laid out as tile_offset says; K's and V's as KvTile::offset.
template <int kD, class KvTile = RowSwizzledTile<kD>>
__device__ __forceinline__ void gqa_mma_stage(GqaWarpState<kD>& st, uint32_t sq, uint32_t sk,
                                              uint32_t sv, int lane, int key_row, int64_t key_base,
                                              const int64_t lim[2], float scale_log2) {
  // S (16 rows x 16 keys) = Q K^T.
  float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    uint32_t a[4], b[4];
    device::ldmatrix_x4(a, sq + tile_offset<kD>((lane / 8 % 2) * 8 + lane % 8, kk * 2 + lane / 16));
    device::ldmatrix_x4(
        b, sk + KvTile::offset(key_row + (lane / 16) * 8 + lane % 8, kk * 2 + lane / 8 % 2));
    device::mma_m16n8k16_bf16(s[0], a, {b[0], b[1]});
    device::mma_m16n8k16_bf16(s[1], a, {b[2], b[3]});
  }
  online_softmax_16(st, s, lane, key_row, key_base, lim, scale_log2);
  // P (16 x 16 keys) as the A operand of P V: the score accumulators' layout is A's.
  const uint32_t pa[4] = {device::pack2<__nv_bfloat16>(s[0][0], s[0][1]),
                          device::pack2<__nv_bfloat16>(s[0][2], s[0][3]),
                          device::pack2<__nv_bfloat16>(s[1][0], s[1][1]),
                          device::pack2<__nv_bfloat16>(s[1][2], s[1][3])};
#pragma unroll
  for (int nd = 0; nd < kD / 16; ++nd) {
    uint32_t b[4];
    device::ldmatrix_x4_trans(
        b, sv + KvTile::offset(key_row + (lane / 8 % 2) * 8 + lane % 8, nd * 2 + lane / 16));
    device::mma_m16n8k16_bf16(st.acc[2 * nd], pa, {b[0], b[1]});
    device::mma_m16n8k16_bf16(st.acc[2 * nd + 1], pa, {b[2], b[3]});
  }
}

/// The warp's (max, sum) of each of its 16 rows into s_max / s_sum[warp][row] (the sums first
/// reduced over the quad that shares a row).
template <int kD>
__device__ __forceinline__ void store_warp_row_stats(GqaWarpState<kD>& st, int lane, float* s_max_w,
                                                     float* s_sum_w) {
  const int gr = lane / 4, tq = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    st.row_sum[h] += __shfl_xor_sync(0xffffffffu, st.row_sum[h], 1);
    st.row_sum[h] += __shfl_xor_sync(0xffffffffu, st.row_sum[h], 2);
    if (tq == 0) {
      s_max_w[gr + 8 * h] = st.row_max[h];
      s_sum_w[gr + 8 * h] = st.row_sum[h];
    }
  }
}

/// The causal limit of the thread's two rows (lane / 4 and lane / 4 + 8 of the tile from row0):
/// keys below min(end, len - qlen + t + 1); padding rows take the last token's.
__device__ __forceinline__ void row_limits(int64_t lim[2], int lane, int row0, int64_t end,
                                           int64_t len, const GqaGeometry& g) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int rt = row0 + lane / 4 + 8 * h;
    const int t = rt < g.rows_per_head ? rt / g.group : g.qlen - 1;
    lim[h] = min(end, len - g.qlen + t + 1);
  }
}

/// The end of a split-KV CTA's chunk, after each math warp (the block's first kWarps) left its
/// rows' (max, sum) in s_max / s_sum[warp] and its O in s_o ((kWarps, kRows, merge_stride) fp32,
/// the stages' bytes, free by then): a barrier of all kThreads threads, then the CTA's rows
/// merged over the warps (each saw a disjoint share of the keys), o = O / sum and lse = (max +
/// log2 sum) ln 2: emit(r, d, o, lse) for each of the tile's rows (r < rows: the group's) and
/// element d.
template <int kD, int kWarps, int kThreads, class Emit>
__device__ __forceinline__ void merge_warp_rows(const float* s_o,
                                                const float (*s_max)[GqaMmaConfig::kRows],
                                                const float (*s_sum)[GqaMmaConfig::kRows], int rows,
                                                Emit&& emit) {
  constexpr int kRows = GqaMmaConfig::kRows;
  constexpr int kStride = static_cast<int>(GqaMmaConfig::merge_stride(kD));
  const int tid = static_cast<int>(threadIdx.x);
  __syncthreads();
  for (int e = tid; e < kRows * kD; e += kThreads) {
    const int r = e / kD, d = e % kD;
    if (r >= rows) break;  // rows are in order: the rest are padding
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_max[w][r]);
    float sum = 0.f, x = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float ws = s_sum[w][r];
      if (ws > 0.f) {
        const float f = exp2f(s_max[w][r] - mx);
        sum += ws * f;
        x += s_o[(w * kRows + r) * kStride + d] * f;
      }
    }
    emit(r, d, sum > 0.f ? x / sum : 0.f,
         sum > 0.f ? (mx + log2f(sum)) * 0.69314718055994531f : -INFINITY);
  }
}

/// merge_warp_rows' emit for a split-KV CTA: o and lse written whole, or as split `split`'s
/// partial (SplitOut).
template <int kD>
struct SplitRowsOut {
  const SplitOut& out;
  int64_t bi;
  int hk, row0, split, splits;
  const GqaGeometry& g;
  __device__ __forceinline__ void operator()(int r, int d, float o, float lse) const {
    const int64_t row = global_row(bi, hk, row0 + r, g);
    out.store_o(row, split, splits, kD, d, o);
    if (d == 0) out.store_lse(row, split, splits, lse);
  }
};

/// A warp's partial for merge_warp_rows (the m16-row accumulators): its rows' (max, sum) into
/// s_max_w / s_sum_w and O's rows into s_o_w (rows of stride floats). kE4m3Columns: the
/// accumulators hold gqa_mma_e4m3.cuh's column order (acc[2j] columns 16j + 4 tq + {0, 2},
/// acc[2j + 1] columns 16j + 4 tq + {1, 3}), not mma's (acc[n] columns 8n + 2 tq + {0, 1}).
template <bool kE4m3Columns, int kD>
__device__ __forceinline__ void store_gqa_partial(GqaWarpState<kD>& state, int lane, float* s_o_w,
                                                  int stride, float* s_max_w, float* s_sum_w) {
  const int gr = lane / 4, tq = lane % 4;
  store_warp_row_stats(state, lane, s_max_w, s_sum_w);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float* row = s_o_w + (gr + 8 * h) * stride;
    if constexpr (kE4m3Columns) {
#pragma unroll
      for (int j = 0; j < kD / 16; ++j)
        *reinterpret_cast<float4*>(row + 16 * j + 4 * tq) =
            make_float4(state.acc[2 * j][2 * h], state.acc[2 * j + 1][2 * h],
                        state.acc[2 * j][2 * h + 1], state.acc[2 * j + 1][2 * h + 1]);
    } else {
#pragma unroll
      for (int n = 0; n < kD / 8; ++n)
        *reinterpret_cast<float2*>(row + 8 * n + 2 * tq) =
            make_float2(state.acc[n][2 * h], state.acc[n][2 * h + 1]);
    }
  }
}

/// The end of v03's split-KV CTA: each math warp's partial (store_gqa_partial), then
/// merge_warp_rows into o / lse or the split's partial. Every thread calls it after the barrier
/// that ends the stages' use.
template <int kD, int kWarps, int kThreads>
__device__ __forceinline__ void write_split_rows(GqaWarpState<kD>& state, float* s_o,
                                                 float (*s_max)[GqaMmaConfig::kRows],
                                                 float (*s_sum)[GqaMmaConfig::kRows],
                                                 const SplitOut& out, int64_t bi, int hk, int row0,
                                                 int split, int splits, const GqaGeometry& g) {
  constexpr int kRows = GqaMmaConfig::kRows;
  constexpr int kStride = static_cast<int>(GqaMmaConfig::merge_stride(kD));
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  if (warp < kWarps)
    store_gqa_partial<false>(state, lane, s_o + warp * kRows * kStride, kStride, s_max[warp],
                             s_sum[warp]);
  merge_warp_rows<kD, kWarps, kThreads>(s_o, s_max, s_sum, g.rows_per_head - row0,
                                        SplitRowsOut<kD>{out, bi, hk, row0, split, splits, g});
}

}  // namespace klab::decode_attention

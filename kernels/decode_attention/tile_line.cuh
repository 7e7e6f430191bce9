#pragma once
// The persistent rungs' (v04, v05) device side of TileLinePlan (split_kv_plan.hpp): where they
// write (LineOut), a position on the batch's line of key tiles (LineCursor), the block scan of
// seq_lens that finds a CTA's range and the sequence it starts in (find_line_range), and the
// merge of a split row group's partials by the last CTA to arrive (merge_row_group).
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/partial_merge.cuh"
#include "kernels/decode_attention/split_kv_plan.hpp"
#include "klab/device/block_scan.cuh"

namespace klab::decode_attention {

/// Where a persistent rung writes: o and lse for a row group inside one CTA's range, else the
/// workspace's slots, merged by the last CTA to arrive on the group's counter.
struct LineOut {
  __nv_bfloat16* o;
  float* lse;
  float* ws_o;    ///< (slots, GqaMmaConfig::kRows, D) the segments' normalised fp32 partials
  float* ws_lse;  ///< (slots, GqaMmaConfig::kRows) their natural-log lse
  int* counters;  ///< (ctas) arrivals on the row group whose last tile is in CTA c's range
  TileLinePlan plan;
  int64_t batch;
};

inline LineOut line_out(__nv_bfloat16* o, float* lse, void* workspace, const TileLinePlan& plan,
                        int64_t b, int64_t d) {
  float* ws = static_cast<float*>(workspace);
  float* ws_lse = ws + plan.slots() * GqaMmaConfig::kRows * d;
  return {
      o,    lse, ws, ws_lse, reinterpret_cast<int*>(ws_lse + plan.slots() * GqaMmaConfig::kRows),
      plan, b};
}

/// A position on the line: key tile k of row group grp of sequence bi (length len, `tiles` key
/// tiles a row group), the sequence's first tile at line index seq_begin.
struct LineCursor {
  int64_t bi, len, tiles, seq_begin, k;
  int grp;

  __device__ __forceinline__ int64_t group_begin() const { return seq_begin + grp * tiles; }
  __device__ __forceinline__ bool last_of_group() const { return k + 1 == tiles; }
  __device__ __forceinline__ int hk(const GqaGeometry& g) const { return grp / g.row_tiles; }
  __device__ __forceinline__ int row0(const GqaGeometry& g) const {
    return (grp % g.row_tiles) * GqaMmaConfig::kRows;
  }
  /// The next tile of the line; true when it opens a new row group. The caller never steps past
  /// the end of the batch's last tile.
  __device__ __forceinline__ bool next(const int32_t* __restrict__ seq_lens, int groups,
                                       const TileLinePlan& plan, int64_t batch) {
    if (++k < tiles) return false;
    k = 0;
    if (++grp < groups) return true;
    grp = 0;
    seq_begin += groups * tiles;
    if (++bi < batch) {
      len = seq_lens[bi];
      tiles = plan.key_tiles(len);
    }
    return true;
  }
};

/// The last CTA to arrive on a split row group: its rows' partials from CTAs c_first .. c_last
/// merged in CTA order (partial_merge.cuh), written to o and lse.
template <int kD, int kUnroll, class Sync>
__device__ __forceinline__ void merge_row_group(const LineOut& out, const TileLinePlan& plan,
                                                int64_t work, int64_t gb, int c_first, int c_last,
                                                int64_t bi, int hk, int row0, const GqaGeometry& g,
                                                float* s_m, float* s_s, Sync sync) {
  constexpr int kRows = GqaMmaConfig::kRows;
  const int rows = min(kRows, g.rows_per_head - row0), parts = c_last - c_first + 1;
  const int64_t slot0 = plan.slot(c_first, gb, work);
  auto slot_of = [&](int i) { return i == 0 ? slot0 : 2 * int64_t(c_first + i); };
  merge_partials<kD, GqaMmaConfig::kThreads, kUnroll>(
      rows, parts, [&](int i, int r) { return __ldcg(out.ws_lse + slot_of(i) * kRows + r); },
      [&](int i, int r, int c4) {
        return __ldcg(reinterpret_cast<const float4*>(out.ws_o + (slot_of(i) * kRows + r) * kD) +
                      c4);
      },
      [&](int r, int c4, float4 x, float lse) {
        const int64_t row = global_row(bi, hk, row0 + r, g);
        store_merged4(out.o, out.lse, row, kD, c4, x, lse);
      },
      s_m, s_s, sync);
}

/// A split row group's segment is in this CTA's slot: the arrival on counter c_last (the
/// partial's stores, a fence, a barrier, one atomic; the last to arrive sees every partial
/// through the others' fences and its own), and the last CTA's merge, which resets the counter
/// for the next launch. s_last is a shared int; s_m and s_s kRows floats of scratch. The math
/// threads (GqaMmaConfig::kThreads, from thread 0) call it; sync() is their barrier.
template <int kD, int kUnroll, class Sync>
__device__ __forceinline__ void arrive_and_merge(const LineOut& out, const TileLinePlan& plan,
                                                 int64_t work, int64_t gb, int c_first, int c_last,
                                                 int64_t bi, int hk, int row0, const GqaGeometry& g,
                                                 int* s_last, float* s_m, float* s_s, Sync sync) {
  __threadfence();
  sync();
  if (threadIdx.x == 0) *s_last = atomicAdd(out.counters + c_last, 1) == c_last - c_first;
  sync();
  if (*s_last) {
    __threadfence();
    merge_row_group<kD, kUnroll>(out, plan, work, gb, c_first, c_last, bi, hk, row0, g, s_m, s_s,
                                 sync);
    if (threadIdx.x == 0) out.counters[c_last] = 0;
  }
}

/// The end of a row group's segment in a persistent rung (v04, v07): the warps' rows rescaled to
/// their common max and summed warp by warp into s_red ((kRows, kD + 4) fp32; in v04 Q's bytes:
/// the barrier after the stats has every warp past its last read of Q), then o = O / sum and
/// lse = (max + log2 sum) ln 2 to o and lse when the row group lies in this CTA's range, else to
/// the CTA's slot, with the arrival and, in the last CTA to arrive, the merge. The math threads
/// (GqaMmaConfig::kThreads, from thread 0) call it; sync() is their barrier; on return s_red, the
/// stats and s_last are free again.
template <int kD, int kUnroll, class Sync>
__device__ __forceinline__ void end_segment(GqaWarpState<kD>& state, const LineCursor& use_at,
                                            const LineOut& out, const TileLinePlan& plan,
                                            int64_t work, const GqaGeometry& g,
                                            float (*s_max)[GqaMmaConfig::kRows],
                                            float (*s_sum)[GqaMmaConfig::kRows], float* s_red,
                                            int* s_last, Sync sync) {
  constexpr int kRows = GqaMmaConfig::kRows, kWarps = GqaMmaConfig::kWarps;
  constexpr int kThreads = GqaMmaConfig::kThreads;
  constexpr int kStride = static_cast<int>(PersistentGqaConfig::red_stride(kD));
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int gr = lane / 4, tq = lane % 4;
  const int c = static_cast<int>(blockIdx.x);
  store_warp_row_stats(state, lane, s_max[warp], s_sum[warp]);
  sync();
  float f[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = gr + 8 * h;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_max[w][r]);
    f[h] = s_sum[warp][r] > 0.f ? exp2f(s_max[warp][r] - mx) : 0.f;
  }
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    if (warp == w) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float* dst = s_red + (gr + 8 * h) * kStride + 2 * tq;
#pragma unroll
        for (int nt = 0; nt < kD / 8; ++nt) {
          float2 v = make_float2(state.acc[nt][2 * h] * f[h], state.acc[nt][2 * h + 1] * f[h]);
          if (w > 0) {
            const float2 prev = *reinterpret_cast<const float2*>(dst + 8 * nt);
            v.x += prev.x;
            v.y += prev.y;
          }
          *reinterpret_cast<float2*>(dst + 8 * nt) = v;
        }
      }
    }
    sync();
  }

  // o = O / sum and lse = (max + log2 sum) ln 2, to o and lse or to this CTA's slot.
  const int64_t gb = use_at.group_begin();
  const int c_first = plan.cta_of(gb, work), c_last = plan.cta_of(gb + use_at.tiles - 1, work);
  const bool whole = c_first == c_last;
  const int64_t slot = plan.slot(c, gb, work);
  const int hk = use_at.hk(g), row0 = use_at.row0(g);
  for (int e = tid; e < kRows * kD; e += kThreads) {
    const int r = e / kD, d = e % kD;
    if (row0 + r >= g.rows_per_head) break;  // rows are in order: the rest are padding
    float mx = -INFINITY, sum = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_max[w][r]);
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      if (s_sum[w][r] > 0.f) sum += s_sum[w][r] * exp2f(s_max[w][r] - mx);
    const float x = sum > 0.f ? s_red[r * kStride + d] / sum : 0.f;
    const float l = sum > 0.f ? (mx + log2f(sum)) * 0.69314718055994531f : -INFINITY;
    if (whole) {
      const int64_t row = global_row(use_at.bi, hk, row0 + r, g);
      out.o[row * kD + d] = __float2bfloat16(x);
      if (d == 0) out.lse[row] = l;
    } else {
      out.ws_o[(slot * kRows + r) * kD + d] = x;
      if (d == 0) out.ws_lse[slot * kRows + r] = l;
    }
  }
  if (!whole)  // the arrival and, in the last CTA to arrive, the merge
    arrive_and_merge<kD, kUnroll>(out, plan, work, gb, c_first, c_last, use_at.bi, hk, row0, g,
                                  s_last, s_max[0], s_sum[0], sync);
  sync();  // s_red, the stats and s_last are free again
}

/// This CTA's range of the line: its tiles [t0, t0 + n) of the `work` tiles the batch's lengths
/// make, under the plan capped at one CTA a tile, and a cursor at t0. Each thread sums the tiles
/// of a contiguous run of sequences, then an exclusive scan of the runs over the CTA; the run
/// holding t0 finds its sequence. Two barriers; false (after the first, for the whole CTA) when
/// this CTA has no range. s_scan holds kThreads / 32 values, s_found two; every one of the
/// CTA's kThreads threads calls it.
struct LineRange {
  TileLinePlan plan;
  int64_t work, t0, n;
  LineCursor at;
};
template <int kThreads = GqaMmaConfig::kThreads>
__device__ __forceinline__ bool find_line_range(const int32_t* __restrict__ seq_lens,
                                                const LineOut& out, int groups, int64_t* s_scan,
                                                int64_t* s_found, LineRange& range) {
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t batch = out.batch;
  const int64_t per = (batch + kThreads - 1) / kThreads;
  const int64_t b_lo = min(batch, tid * per), b_hi = min(batch, b_lo + per);
  int64_t mine = 0;
  for (int64_t b = b_lo; b < b_hi; ++b) mine += out.plan.key_tiles(seq_lens[b]);
  mine *= groups;
  int64_t work = 0;
  const int64_t excl = device::block_exclusive_scan<kThreads>(mine, s_scan, work);
  // Every range non-empty: at most one CTA a tile.
  const TileLinePlan plan{static_cast<int>(min(int64_t(out.plan.ctas), work)), out.plan.tile};
  const int c = static_cast<int>(blockIdx.x);
  if (c >= plan.ctas) return false;
  const int64_t t0 = plan.begin(c, work);
  if (excl <= t0 && t0 < excl + mine) {
    int64_t at = excl;
    for (int64_t b = b_lo; b < b_hi; ++b) {
      const int64_t w = out.plan.key_tiles(seq_lens[b]) * groups;
      if (t0 < at + w) {
        s_found[0] = b;
        s_found[1] = at;
        break;
      }
      at += w;
    }
  }
  __syncthreads();
  LineCursor& a = range.at;
  a.bi = s_found[0];
  a.seq_begin = s_found[1];
  a.len = seq_lens[a.bi];
  a.tiles = plan.key_tiles(a.len);
  a.grp = static_cast<int>((t0 - a.seq_begin) / a.tiles);
  a.k = (t0 - a.seq_begin) % a.tiles;
  range.plan = plan;
  range.work = work;
  range.t0 = t0;
  range.n = plan.begin(c + 1, work) - t0;
  return true;
}

}  // namespace klab::decode_attention

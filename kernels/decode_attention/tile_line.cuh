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
template <int kD, int kUnroll>
__device__ __forceinline__ void merge_row_group(const LineOut& out, const TileLinePlan& plan,
                                                int64_t work, int64_t gb, int c_first, int c_last,
                                                int64_t bi, int hk, int row0, const GqaGeometry& g,
                                                float* s_m, float* s_s) {
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
        *reinterpret_cast<uint2*>(out.o + row * kD + c4 * 4) = make_uint2(
            device::pack2<__nv_bfloat16>(x.x, x.y), device::pack2<__nv_bfloat16>(x.z, x.w));
        if (c4 == 0) out.lse[row] = lse;
      },
      s_m, s_s);
}

/// A split row group's segment is in this CTA's slot: the arrival on counter c_last (the
/// partial's stores, a fence, a barrier, one atomic; the last to arrive sees every partial
/// through the others' fences and its own), and the last CTA's merge, which resets the counter
/// for the next launch. s_last is a shared int; s_m and s_s kRows floats of scratch.
template <int kD, int kUnroll>
__device__ __forceinline__ void arrive_and_merge(const LineOut& out, const TileLinePlan& plan,
                                                 int64_t work, int64_t gb, int c_first, int c_last,
                                                 int64_t bi, int hk, int row0, const GqaGeometry& g,
                                                 int* s_last, float* s_m, float* s_s) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) *s_last = atomicAdd(out.counters + c_last, 1) == c_last - c_first;
  __syncthreads();
  if (*s_last) {
    __threadfence();
    merge_row_group<kD, kUnroll>(out, plan, work, gb, c_first, c_last, bi, hk, row0, g, s_m, s_s);
    if (threadIdx.x == 0) out.counters[c_last] = 0;
  }
}

/// This CTA's range of the line: its tiles [t0, t0 + n) of the `work` tiles the batch's lengths
/// make, under the plan capped at one CTA a tile, and a cursor at t0. Each thread sums the tiles
/// of a contiguous run of sequences, then an exclusive scan of the runs over the CTA; the run
/// holding t0 finds its sequence. Two barriers; false (after the first, for the whole CTA) when
/// this CTA has no range. s_scan holds kWarps values, s_found two.
struct LineRange {
  TileLinePlan plan;
  int64_t work, t0, n;
  LineCursor at;
};
__device__ __forceinline__ bool find_line_range(const int32_t* __restrict__ seq_lens,
                                                const LineOut& out, int groups, int64_t* s_scan,
                                                int64_t* s_found, LineRange& range) {
  constexpr int kThreads = GqaMmaConfig::kThreads, kWarps = GqaMmaConfig::kWarps;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t batch = out.batch;
  const int64_t per = (batch + kThreads - 1) / kThreads;
  const int64_t b_lo = min(batch, tid * per), b_hi = min(batch, b_lo + per);
  int64_t mine = 0;
  for (int64_t b = b_lo; b < b_hi; ++b) mine += out.plan.key_tiles(seq_lens[b]);
  mine *= groups;
  int64_t incl = mine;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const int64_t v = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= off) incl += v;
  }
  if (lane == 31) s_scan[warp] = incl;
  __syncthreads();
  int64_t work = 0, excl = incl - mine;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    work += s_scan[w];
    if (w < warp) excl += s_scan[w];
  }
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

#pragma once
// The TMA page gather of v06, v07 and v08: a (page, KV head) of the HND pool is one contiguous
// run of P x D elements, read as boxes of min(P, 64) key rows x 128 bytes (64 bf16 or 128 e4m3
// columns) of a 2-D tensor map over the pool (rows: pages x KV heads x P), 128-byte swizzled,
// into a stage of kBlockN = 64 keys laid out as Swizzle128Tile says. kElem: the KV element's
// bytes (2: bf16, 1: e4m3). A stage spans whole pages (P <= 64: 64 / P of them, one a lane of
// the producer warp) or lies inside one (P > 64). Pages a power of two from 8 tokens, so that
// every box is whole 1024-byte swizzle atoms at a 1024-byte aligned offset.
#include <cuda.h>

#include <climits>
#include <cstdint>
#include <string>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/rung_plans.hpp"
#include "kernels/decode_attention/table_window.hpp"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"

namespace klab::decode_attention {

/// The stage tiles: kBlockN rows of kD elements of kElem bytes in 128-byte swizzled blocks.
template <int kD, int kElem = 2>
using TmaKvTile = Swizzle128Tile<kD * kElem, GqaMmaConfig::kBlockN>;

/// A pool (pages, Hkv, P, D) of kElem-byte elements as a 2-D tensor of pages x Hkv x P rows of
/// D, read in boxes of min(P, 64) rows x 128 bytes, 128-byte swizzled (host). L2 fetches 128
/// bytes around a miss: a box row's own line (256 bytes would also fetch the row's next 128
/// bytes, which the next box then asks for as an L2 hit).
inline CUtensorMap pool_map(const void* pool, const Dims& s, int elem = 2) {
  return device::tensor_map_2d(
      pool, elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8,
      static_cast<uint64_t>(s.d), static_cast<uint64_t>(pool_pages(s) * s.hkv * s.page),
      static_cast<uint64_t>(s.d * elem), static_cast<uint32_t>(128 / elem),
      static_cast<uint32_t>(TmaPagesConfig::rows_per_box(s.page)), CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

/// What a TMA-fed rung (v06, v07) needs of a problem: pages a power of two from 8 tokens, and
/// the pool's rows within the TMA's i32 coordinates (host).
inline Status tma_page_limits(const std::string& rung, const Dims& s) {
  if (!TmaPagesConfig::page_ok(s.page))
    return Status::no("decode_attention." + rung +
                      ": pages must be a power of two from 8 tokens (TMA boxes of whole 1024-byte "
                      "swizzle atoms)");
  if (pool_pages(s) * s.hkv * s.page > INT32_MAX)
    return Status::no("decode_attention." + rung +
                      ": the pool's rows exceed the TMA's i32 coordinates");
  return Status::yes();
}

/// StagePages::issue's marks when nothing is traced.
struct NoIssueMarks {
  __device__ void operator()(int) const {}
};

/// The keys [k0, k1) of one stage of sequence `table_row` (its block-table row; k0 a multiple of
/// kBlockN, k1 <= the sequence's length, k1 - k0 <= kBlockN), read by the producer warp.
struct StagePages {
  int64_t k0, k1;

  /// Pages the keys span (0 for none: an empty sequence's stage reads nothing).
  __device__ int count(const GqaGeometry& g) const {
    return k1 > k0 ? static_cast<int>(((k1 - 1) >> g.page_shift) - (k0 >> g.page_shift) + 1) : 0;
  }
  /// Lane `lane`'s page: its block-table entry, or -1 past count().
  __device__ int entry(const int32_t* __restrict__ table_row, int lane,
                       const GqaGeometry& g) const {
    return lane < count(g) ? table_row[(k0 >> g.page_shift) + lane] : -1;
  }
  /// Lane `lane`'s entry of the stage at k0 read before the sequence's length is known (a
  /// split's first stage, its load beside the length's): every page a stage of kBlockN keys can
  /// span from k0, within the table's row; the issue uses those below count().
  __device__ static int entry_ahead(const int32_t* __restrict__ table_row, int64_t k0, int lane,
                                    const GqaGeometry& g) {
    const int64_t col = (k0 >> g.page_shift) + lane;
    const int per_stage = g.page < GqaMmaConfig::kBlockN
                              ? static_cast<int>(GqaMmaConfig::kBlockN >> g.page_shift)
                              : 1;
    return lane < per_stage && col < g.max_pages ? table_row[col] : -1;
  }
  /// Issues the stage into the slot at sk (K tile, then V tile kTileBytes on) for KV head hk,
  /// completing on `full`: lane 0 arms the barrier with the bytes of count() pages' boxes, then
  /// lane l < count() loads its page `pool_page` (entry(), fetched earlier). The whole warp
  /// calls it.
  /// `marked` (a traced kernel's first stage): called with 0 once the barrier is armed (after the
  /// warp barrier), with 1 after the lane's first copy is issued; the default does nothing.
  template <int kD, int kElem = 2, class Marked = NoIssueMarks>
  __device__ void issue(const CUtensorMap* k_map, const CUtensorMap* v_map, unsigned char* sk,
                        uint64_t* full, int pool_page, int hk, int lane, const GqaGeometry& g,
                        Marked marked = {}) const {
    constexpr uint32_t kTileBytes = GqaMmaConfig::kBlockN * kD * kElem;
    const int pages = count(g);
    const int box_rows = static_cast<int>(TmaPagesConfig::rows_per_box(g.page));
    if (lane == 0)
      device::mbarrier_arrive_expect_tx(full,
                                        static_cast<uint32_t>(pages * box_rows * kD * kElem * 2));
    __syncwarp();
    marked(0);
    if (lane >= pages) return;
    // The box's first pool row: a stage starts mid-page when P > 64.
    const int page = static_cast<int>(g.page);
    const int row = (pool_page * g.hkv + hk) * page + static_cast<int>(k0 & (page - 1));
    const uint32_t dst = static_cast<uint32_t>(lane * box_rows) * 128;
#pragma unroll
    for (int cb = 0; cb < kD * kElem / 128; ++cb) {
      const uint32_t off = cb * TmaKvTile<kD, kElem>::kBlockBytes + dst;
      device::tma_load_2d(sk + off, k_map, cb * (128 / kElem), row, full);
      if (cb == 0) marked(1);
      device::tma_load_2d(sk + kTileBytes + off, v_map, cb * (128 / kElem), row, full);
    }
  }
};

/// v38's page indices for the producer warp: the table entries of 32 consecutive columns (a
/// window), one a lane, in one warp load (a 128-byte line where the row is aligned so); each
/// stage's entries taken from the window by a shuffle (TableWindowIndex: which window and lane).
/// Two windows are held: the one in use and the next, whose load is issued when its
/// predecessor's first stage is taken, so it has the window's stages (eight at pages of 16, 32 at
/// 64) to arrive, where StagePages::entry loads a stage's entries one stage ahead. Stages must be
/// taken in order.
struct TableWindow {
  const int32_t* __restrict__ table_row = nullptr;
  int64_t max_pages = 0;
  TableWindowIndex at;
  int cur = -1, next = -1;  // the lane's entry of window at.w and of window at.w + 1
  /// The lane's entry of window `win`, -1 past the table's row.
  __device__ int load(int win, int lane) const {
    const int64_t col = at.column(win, lane);
    return col < max_pages ? table_row[col] : -1;
  }
  /// Windows 0 and 1 requested for the split whose first stage starts at key k0 (beside the
  /// sequence's length: they need nothing of it).
  __device__ void start(const int32_t* __restrict__ row, int64_t k0, int lane,
                        const GqaGeometry& g) {
    table_row = row;
    max_pages = g.max_pages;
    at = TableWindowIndex{k0 >> g.page_shift, 0};
    cur = load(0, lane);
    next = load(1, lane);
  }
  /// Lane `lane`'s page of stage `st` (for lanes below st.count(g); the others' value is unused):
  /// the windows moved on to the stage's, the next one requested on the way. The whole warp
  /// calls it.
  __device__ int entry(const StagePages& st, int lane, const GqaGeometry& g) {
    const int64_t col = st.k0 >> g.page_shift;
    if (at.advance(col)) {
      cur = next;
      next = load(at.w + 1, lane);
    }
    return __shfl_sync(0xffffffffu, cur, at.source_lane(col, lane));
  }
};

/// A math warp's V rows (warp * 16 .. + 15 of the stage at sv, keys key_base + row) at or past
/// `end` to zeros: a page's slots past the sequence, or pages a stage did not load, may hold
/// anything, and their P = 0 times a NaN would be NaN. Then __syncwarp: the warp's own ldmatrix
/// reads see them.
template <int kD, int kElem = 2>
__device__ __forceinline__ void zero_v_rows_past(uint32_t sv, int warp, int lane, int64_t key_base,
                                                 int64_t end) {
  constexpr int kChunks = kD * kElem / 16;
  if (key_base + GqaMmaConfig::kBlockN <= end) return;
  for (int c = lane; c < 16 * kChunks; c += 32) {
    const int r = warp * 16 + c / kChunks;
    if (key_base + r >= end)
      device::st_shared_v4(sv + TmaKvTile<kD, kElem>::offset(r, c % kChunks),
                           make_uint4(0, 0, 0, 0));
  }
  __syncwarp();
}

}  // namespace klab::decode_attention

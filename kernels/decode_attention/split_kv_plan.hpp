#pragma once
// How the split-KV rungs (v02, v03) cut each sequence's keys into chunks, one CTA per (sequence,
// work unit, chunk), and where the chunks' partial outputs live in the workspace.
//
// A CTA of split s reads keys [s * chunk, min(len, (s + 1) * chunk)) of its sequence. A sequence
// of length len has splits_of(len) splits (one for an empty sequence: split 0 writes its O = 0 and
// lse = -inf). With one split a CTA writes o and lse directly; with more, each split writes its
// normalised fp32 partial O and its lse to the workspace, and the merge kernel (split_kv.cuh)
// combines the splits of each row by log-sum-exp in split order (deterministic, no atomics).
//
// The chunk is chosen on the host from the shape alone (the launch never reads the lengths back):
// the batch's total length, spread over the CTAs the device holds at once, so that one wave is
// about full whatever the batch (B = 1, L = 32k: 8 KV heads x 32 splits on 132 SMs x 2); a
// ragged batch is cut by its total, not its longest, so its long sequences get many splits and
// its short ones one. Host-and-device constexpr: the CPU tests check that the splits cover every
// key once, that none is empty, and that the workspace slices are disjoint.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::decode_attention {

struct SplitKvPlan {
  int64_t chunk = 1;   ///< keys per split: a multiple of the rung's tile
  int max_splits = 1;  ///< splits of the longest sequence: the grid's split dimension
  /// A compact grid's sequences (v22: the grid's x enumerates every sequence's splits_of(len)
  /// splits, compact_grid.cuh; v28: the grid is the work list's items), 0 for the (split, row
  /// group, sequence) grid. In the padding after
  /// max_splits: the kernels' parameters keep their layout.
  int compact_batch = 0;

  /// Splits of a sequence of length len (at least one: an empty sequence's split 0 writes its
  /// zeros).
  KLAB_HOST_DEVICE constexpr int splits_of(int64_t len) const {
    return len <= chunk ? 1 : static_cast<int>((len + chunk - 1) / chunk);
  }
  /// Split s's keys: [key_begin(s), key_end(s, len)).
  KLAB_HOST_DEVICE constexpr int64_t key_begin(int s) const { return s * chunk; }
  KLAB_HOST_DEVICE constexpr int64_t key_end(int s, int64_t len) const {
    return std::min(len, key_begin(s) + chunk);
  }
  /// The partial of (query row, split): row r's D floats at partial_o(r, s) * D of the workspace's
  /// O part, its lse at partial_lse(r, s) of the lse part (after rows * max_splits * D floats).
  KLAB_HOST_DEVICE constexpr int64_t partial_index(int64_t row, int s) const {
    return row * max_splits + s;
  }
  /// Floats of the workspace for `rows` query rows of d elements (none with one split).
  constexpr int64_t workspace_floats(int64_t rows, int64_t d) const {
    return max_splits > 1 ? rows * max_splits * (d + 1) : 0;
  }
};

static_assert(sizeof(SplitKvPlan) == 16,
              "compact_batch sits in the padding: the kernels' "
              "parameters keep their layout");

/// What a rung asks of its plan.
struct SplitKvTarget {
  int64_t units = 1;  ///< CTAs per (sequence, split): query rows (v02), KV heads x row tiles (v03)
  int64_t slots = 1;  ///< CTAs resident on the device at once (SMs x CTAs per SM)
  int64_t tile = 1;   ///< a chunk is a multiple of this (the rung's keys per pipeline stage)
  int64_t min_chunk = 1;  ///< shorter chunks cost more in merge traffic and pipeline fill than
                          ///< they gain in parallelism
  int64_t max_chunk = INT64_MAX;  ///< what the rung's shared memory holds (v03's page indices)
};

constexpr int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// The chunk that spreads total_len keys (the batch's, for every unit) over one wave of slots,
/// rounded up to the tile, at least min_chunk and at most max_chunk; the splits of the longest
/// sequence (max_len) size the grid.
constexpr SplitKvPlan plan_split_kv(int64_t max_len, int64_t total_len, const SplitKvTarget& t) {
  SplitKvPlan p;
  const int64_t want = (std::max<int64_t>(total_len, 1) * t.units + t.slots - 1) / t.slots;
  const int64_t lo = round_up(std::max<int64_t>(t.min_chunk, 1), t.tile);
  const int64_t hi = std::max(lo, t.max_chunk / t.tile * t.tile);
  p.chunk = std::clamp(round_up(want, t.tile), lo, hi);
  p.max_splits = p.splits_of(max_len);
  return p;
}

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// v04's persistent schedule: the batch's work is one line of key tiles, ordered (sequence, row
/// group, key tile), where a row group is a CTA's m16 tile of one KV head's query rows and a
/// sequence of length len has key_tiles(len) tiles per row group (one for an empty sequence,
/// whose tile writes O = 0 and lse = -inf). Of `ctas` CTAs, CTA c takes the contiguous tiles
/// [begin(c), begin(c + 1)) with begin(c) = floor(c * work / ctas): every CTA the same number of
/// tiles to one, whatever the lengths. A row group whose tiles lie in one CTA's range is written
/// directly; one that spans CTAs c_first .. c_last leaves one partial per CTA (its segment), and
/// the CTA that arrives last on counter c_last merges them in CTA order. A CTA writes at most two
/// partials: its range's first segment (slot 2c) and its last one (slot 2c + 1), so the workspace
/// is 2 * ctas slots and ctas counters whatever the batch. The kernel computes `work` itself from
/// the lengths; work >= ctas keeps every range non-empty (the launch caps its CTAs at work).
struct TileLinePlan {
  int ctas = 1;       ///< CTAs sharing the line (the grid, at most the work)
  int64_t tile = 64;  ///< keys a tile

  KLAB_HOST_DEVICE constexpr int64_t key_tiles(int64_t len) const {
    return len <= tile ? 1 : (len + tile - 1) / tile;
  }
  /// The first tile of CTA c's range (c = ctas: the end of the line).
  KLAB_HOST_DEVICE constexpr int64_t begin(int c, int64_t work) const {
    return int64_t(c) * work / ctas;
  }
  /// The CTA whose range holds tile t: the largest c with begin(c) <= t.
  KLAB_HOST_DEVICE constexpr int cta_of(int64_t t, int64_t work) const {
    return static_cast<int>(((t + 1) * ctas - 1) / work);
  }
  /// The partial slot of CTA c's segment of the row group whose first tile is group_begin: slot
  /// 2c when the segment opens c's range, else 2c + 1 (c's last segment).
  KLAB_HOST_DEVICE constexpr int64_t slot(int c, int64_t group_begin, int64_t work) const {
    return 2 * int64_t(c) + (group_begin <= begin(c, work) ? 0 : 1);
  }
  /// Rows of a partial: one m16 tile of query rows.
  static constexpr int64_t kSlotRows = 16;
  /// Partial slots in the workspace: two a CTA.
  constexpr int64_t slots() const { return 2 * int64_t(ctas); }
  /// Floats of the workspace: the slots' (kSlotRows, d) partial outputs, their kSlotRows lse,
  /// then `ctas` int counters. Independent of the batch's rows (split_kv_variant's signature).
  constexpr int64_t workspace_floats(int64_t /*rows*/, int64_t d) const {
    return slots() * kSlotRows * (d + 1) + ctas;
  }
};

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// v05's ring of page indices: the block-table entries of tile t of a CTA's range (its t-th tile,
/// counted from the range's start) land in shared-memory slot slot(t) by cp.async in the commit
/// group that carries tile t - lead's K/V (the prologue's group for t < lead). Tile t's copies
/// are issued at iteration t - (stages - 1), after the wait that completes the groups up to that
/// iteration's tile and a barrier, so lead = stages - 1 is the least that has its indices in
/// shared memory by then: no global load on the copies' critical path. In the loop a slot is
/// fetched again (tile t + kSlots) kSlots - lead iterations after its copies read it, so
/// kSlots > lead; in the prologue the first stages - 1 tiles' copies and the fetches of the
/// next stages - 1 tiles' indices share one interval between barriers, so the slots must hold
/// lead + stages - 1 tiles: 6 at 4 stages (D = 64), hence 8. A 64-key tile spans at most
/// kEntries pages (P = 1). The CPU tests replay the kernel's order of waits,
/// barriers, copies and slot reuse with these constants.
struct PageIndexRing {
  static constexpr int kSlots = 8;     ///< slots of page indices (a power of two)
  static constexpr int kEntries = 64;  ///< page indices a tile of 64 keys spans at most

  /// Tiles between a tile's index fetch and its K/V copies, for a ring of `stages` K/V stages.
  KLAB_HOST_DEVICE static constexpr int lead(int stages) { return stages - 1; }
  KLAB_HOST_DEVICE static constexpr int slot(int64_t t) { return static_cast<int>(t % kSlots); }
  /// The first page (a block-table column) of key tile k.
  KLAB_HOST_DEVICE static constexpr int64_t first_page(int64_t k, int64_t tile, int64_t page) {
    return k * tile / page;
  }
  /// The block-table columns of key tile k that hold keys below len: first_page .. + entries - 1
  /// (0 for an empty tile: an empty sequence's tile reads no index).
  KLAB_HOST_DEVICE static constexpr int entries(int64_t k, int64_t tile, int64_t page,
                                                int64_t len) {
    const int64_t j0 = k * tile, j1 = std::min(len, j0 + tile);  // keys [j0, j1)
    return j1 > j0 ? static_cast<int>((j1 - 1) / page - j0 / page + 1) : 0;
  }
};

}  // namespace klab::decode_attention

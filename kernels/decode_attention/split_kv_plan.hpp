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

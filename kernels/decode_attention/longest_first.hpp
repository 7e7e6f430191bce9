#pragma once
// v28-v30's counter path on a ragged batch: the CTAs in a work list, longest first, and v29's
// chunk chosen by simulating that order (host-side; the CPU tests check both).
//
// The (split, row group, sequence) grid starts the CTAs in sequence order, whatever their
// lengths, so one of the longest may start last and stream alone at the launch's end; that is
// why plan_split_kv_waves caps a ragged batch's chunks at half a slot's mean work. Here the host
// (a serving engine's planner knows every request's length, as FlashInfer's plan step does)
// lists each sequence's splits with their row groups, the splits with the most keys first, and
// copies the list into the workspace; CTA x of a one-dimensional grid takes item x / groups,
// row group x % groups. The block scheduler then hands the short splits to the SMs that finish
// first (list scheduling in decreasing order: Graham's LPT).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <queue>
#include <tuple>
#include <vector>

#include "kernels/decode_attention/rung_plans.hpp"
#include "klab/device/host_device.hpp"

namespace klab::decode_attention {

/// One split of one sequence, and its keys.
struct WorkItem {
  int64_t seq = 0;
  int split = 0;
  int64_t keys = 0;
};

/// Every split of every sequence (lens: a length a batch slot, in slot order; an empty slot's
/// split 0 has no keys and still runs, to write its zeros), in the order the CTAs start: most
/// keys first, then the longer sequence, then slot and split order.
inline std::vector<WorkItem> longest_first_items(const SplitKvPlan& plan,
                                                 const std::vector<int64_t>& lens) {
  std::vector<WorkItem> items;
  for (size_t b = 0; b < lens.size(); ++b)
    for (int s = 0; s < plan.splits_of(lens[b]); ++s)
      items.push_back(
          {int64_t(b), s, std::max<int64_t>(0, plan.key_end(s, lens[b]) - plan.key_begin(s))});
  std::stable_sort(items.begin(), items.end(), [&](const WorkItem& x, const WorkItem& y) {
    if (x.keys != y.keys) return x.keys > y.keys;
    return lens[size_t(x.seq)] > lens[size_t(y.seq)];
  });
  return items;
}

/// An item as the kernel reads it: the slot in the high 16 bits, the split in the low 16
/// (tma_pages_limits keeps b <= 65535; work_list_fits checks the splits).
constexpr uint32_t pack_work_item(int64_t seq, int split) {
  return uint32_t(seq) << 16 | uint32_t(split);
}
/// The kernel's side of pack_work_item.
KLAB_HOST_DEVICE constexpr void unpack_work_item(uint32_t item, int64_t& seq, int& split) {
  seq = item >> 16;
  split = static_cast<int>(item & 0xffffu);
}
constexpr bool work_list_fits(const SplitKvPlan& plan, int64_t b) {
  return b <= 65535 && plan.max_splits <= 65535;
}
inline std::vector<uint32_t> packed_work_list(const std::vector<WorkItem>& items) {
  std::vector<uint32_t> out;
  out.reserve(items.size());
  for (const WorkItem& w : items) out.push_back(pack_work_item(w.seq, w.split));
  return out;
}

/// The splits of a batch (their count does not depend on which slot holds which length).
inline int64_t work_items(const SplitKvPlan& plan, const std::vector<int64_t>& lens) {
  int64_t n = 0;
  for (int64_t l : lens) n += plan.splits_of(l);
  return n;
}

/// Whether a counter path's launch takes a compact grid or a work list (CounterGrid): a ragged
/// batch that its plan does not cluster (equal lengths leave no split empty).
inline bool counter_grid_applies(bool cluster, const std::vector<int64_t>& lens) {
  return !cluster && !lens.empty() && !uniform_lengths(lens);
}

/// The work list's place in the workspace: past the plan's `plan_bytes`, 16-byte aligned, one
/// packed item a split.
struct WorkListLayout {
  size_t offset = 0, bytes = 0;
  size_t end() const { return offset + bytes; }
};
inline WorkListLayout work_list_layout(size_t plan_bytes, int64_t items) {
  return {(plan_bytes + 15) / 16 * 16, sizeof(uint32_t) * static_cast<size_t>(items)};
}

/// When `items` (each `units` CTAs of keys + overhead, in that order) end on `slots` equal
/// slots that each take the next CTA as they free up: the block scheduler's list schedule.
inline double list_schedule_makespan(const std::vector<WorkItem>& items, int64_t units,
                                     int64_t slots, int64_t overhead) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int64_t s = 0; s < slots; ++s) free_at.push(0.0);
  double end = 0;
  for (const WorkItem& w : items)
    for (int64_t u = 0; u < units; ++u) {
      const double t = free_at.top() + double(w.keys + overhead);
      free_at.pop();
      free_at.push(t);
      end = std::max(end, t);
    }
  return end;
}

/// v29, v30: plan_v13 where it clusters or the lengths are equal; on the counter path of a
/// ragged batch, the chunk whose longest-first list ends soonest by list_schedule_makespan on
/// the counter kernel's resident CTAs, each charged plan_v06's two tiles of start and end. The
/// candidates cut the longest sequence into s equal tile multiples (at least kMinChunk) for s = 1
/// up to four times the splits of a slot's mean work; ties go to the longer chunk (fewer
/// partials to merge). Memoised by shape (the simulation takes milliseconds at 64 sequences).
inline ClusterSplitPlan plan_longest_first(const Dims& s, int sm_count, int64_t elem) {
  using Gqa = GqaMmaConfig;
  const ClusterSplitPlan v13 = plan_v13(s, sm_count, elem);
  const std::vector<int64_t> lens = context_lengths(s);
  if (!counter_grid_applies(v13.cluster, lens)) return v13;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int, int64_t>;
  static std::mutex mutex;
  static std::map<Key, ClusterSplitPlan> known;
  const Key key{s.b, s.qlen, s.hq, s.hkv, s.d, s.page, s.len, s.min_len, s.empty, sm_count, elem};
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  const int64_t units = s.hkv * Gqa::row_tiles(s);
  const int64_t slots = std::max(1, sm_count) * TmaPagesConfig::ctas_per_sm(s.d, elem);
  const int64_t max_len = *std::max_element(lens.begin(), lens.end());
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t(0));
  const int64_t per_slot = std::max<int64_t>(1, (total * units + slots - 1) / slots);
  const int64_t s_max = 4 * ((max_len + per_slot - 1) / per_slot) + 4;
  ClusterSplitPlan best = v13;
  double best_cost = INFINITY;
  int64_t last = 0;
  for (int64_t n = 1; n <= s_max; ++n) {
    const int64_t chunk = std::max(Gqa::kMinChunk, round_up((max_len + n - 1) / n, Gqa::kBlockN));
    if (chunk == last) continue;
    last = chunk;
    SplitKvPlan p{chunk, 1};
    const double cost =
        list_schedule_makespan(longest_first_items(p, lens), units, slots, 2 * Gqa::kBlockN);
    if (cost < best_cost - 1e-9) {
      best_cost = cost;
      best.chunk = chunk;
      best.max_splits = p.splits_of(max_len);
    }
  }
  best.groups = s.b * units;
  best.cluster = false;
  return known[key] = best;
}

}  // namespace klab::decode_attention

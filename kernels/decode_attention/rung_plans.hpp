#pragma once
// The split and line plans of v02-v06 and their shared-memory budgets, host-side (the CPU tests check
// them at the headline shapes on the H200's 132 SMs): each rung's launch, workspace_bytes and
// can_implement call these, so the tests see the plan the kernels run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/decode_attention/family.hpp"
#include "kernels/decode_attention/split_kv_plan.hpp"

namespace klab::decode_attention {

/// Sum of the batch's lengths (a function of the shape: context_lengths).
inline int64_t total_length(const Dims& s) {
  const std::vector<int64_t> lens = context_lengths(s);
  return std::accumulate(lens.begin(), lens.end(), int64_t(0));
}

/// v02: one CTA of 128 threads per (query row, split), 16 resident per SM (2048 threads); its
/// warps walk keys one at a time, so a chunk of 128 keys gives each warp 32.
inline constexpr int64_t kV02CtasPerSm = 16;
inline SplitKvPlan plan_v02(const Dims& s, int sm_count) {
  return plan_split_kv(s.len, total_length(s),
                       {s.qlen * s.hq, std::max(1, sm_count) * kV02CtasPerSm, /*tile*/ 32,
                        /*min_chunk*/ 128});
}

/// v03's geometry: a CTA of four warps holds one m16 tile of a KV head's query rows (group x
/// qlen, padded to 16) and streams its chunk's keys in stages of kBlockN; the chunk's page
/// indices are staged in shared memory, so a chunk is at most kMaxChunk keys.
struct GqaMmaConfig {
  static constexpr int kBlockN = 64;  // keys a stage: 16 a warp
  static constexpr int kWarps = 4, kThreads = kWarps * 32;
  static constexpr int kRows = 16;  // query rows a CTA: one mma m16 tile
  static constexpr int64_t kMaxChunk = 2048, kMinChunk = 2 * kBlockN;
  static constexpr int64_t kSmemPerSm = 228 * 1024, kSmemReservedPerCta = 1024;
  static constexpr int64_t kStaticSmem = 2 * kWarps * kRows * 4;  // the warps' row max and sum

  /// Stages of K and V tiles: 32 KiB a stage at D = 128, three of them (two CTAs an SM).
  static constexpr int stages(int64_t d) { return d <= 64 ? 4 : d <= 128 ? 3 : 2; }
  static constexpr int64_t stage_bytes(int64_t d) { return 2 * kBlockN * d * 2; }
  /// Page indices a chunk spans at most (it need not start on a page boundary).
  static constexpr int64_t table_entries(int64_t page) { return kMaxChunk / page + 2; }
  /// Dynamic shared memory: the stages, Q's tile, the page indices. The warps' partial outputs
  /// reuse the stages at the end (merge_bytes <= the stages).
  static constexpr int64_t smem_bytes(int64_t d, int64_t page) {
    return stages(d) * stage_bytes(d) + kRows * d * 2 + table_entries(page) * 4;
  }
  static constexpr int64_t merge_stride(int64_t d) { return d + 4; }  // floats a row, padded
  static constexpr int64_t merge_bytes(int64_t d) { return kWarps * kRows * merge_stride(d) * 4; }
  /// CTAs an SM holds by shared memory: `dynamic` and `static_bytes` a CTA (at least one).
  static constexpr int64_t resident(int64_t dynamic, int64_t static_bytes) {
    return std::max<int64_t>(1, kSmemPerSm / (dynamic + static_bytes + kSmemReservedPerCta));
  }
  static constexpr int64_t ctas_per_sm(int64_t d, int64_t page) {
    return resident(smem_bytes(d, page), kStaticSmem);
  }
  /// m16 tiles of a KV head's query rows.
  static int64_t row_tiles(const Dims& s) { return (s.group() * s.qlen + kRows - 1) / kRows; }
};

inline SplitKvPlan plan_v03(const Dims& s, int sm_count) {
  using Cfg = GqaMmaConfig;
  return plan_split_kv(
      s.len, total_length(s),
      {s.hkv * Cfg::row_tiles(s), std::max(1, sm_count) * Cfg::ctas_per_sm(s.d, s.page),
       Cfg::kBlockN, Cfg::kMinChunk, Cfg::kMaxChunk});
}

/// v04's geometry: v03's CTA (one m16 tile of a KV head's query rows, four warps, stages of
/// kBlockN keys) walking a contiguous range of the batch's key tiles (TileLinePlan) with one ring
/// of stages across its row groups. No page-index buffer (each thread fetches the indices of its
/// rows one tile ahead) and no stage reuse at a segment's end (the ring holds the next segment's
/// tiles): the warps' outputs are summed in one fp32 m16 x D buffer that shares its bytes with Q's
/// tile (Q is reloaded for the next segment after it).
struct PersistentGqaConfig {
  using Gqa = GqaMmaConfig;
  /// Fewer tiles a CTA than this and the merge's partials cost more than the parallelism gains.
  static constexpr int64_t kMinTilesPerCta = 2;
  static constexpr int64_t kStaticSmem = 2 * Gqa::kWarps * Gqa::kRows * 4 + 128;  // stats, scan

  static constexpr int64_t red_stride(int64_t d) { return d + 4; }  // floats a row, padded
  static constexpr int64_t q_bytes(int64_t d) {
    return std::max(Gqa::kRows * d * 2, Gqa::kRows * red_stride(d) * 4);
  }
  static constexpr int64_t smem_bytes(int64_t d) {
    return Gqa::stages(d) * Gqa::stage_bytes(d) + q_bytes(d);
  }
  static constexpr int64_t ctas_per_sm(int64_t d) {
    return Gqa::resident(smem_bytes(d), kStaticSmem);
  }
  /// Row groups of a sequence: KV heads x m16 row tiles.
  static int64_t row_groups(const Dims& s) { return s.hkv * Gqa::row_tiles(s); }
};

/// The batch's key tiles (the length of v04's line), from the shape's lengths.
inline int64_t tile_line_work(const Dims& s, const TileLinePlan& plan) {
  int64_t w = 0;
  for (int64_t l : context_lengths(s)) w += plan.key_tiles(l);
  return w * PersistentGqaConfig::row_groups(s);
}

/// A persistent rung's line on the device: every resident CTA (SMs x Cfg's CTAs an SM), fewer
/// when the batch has under Cfg::kMinTilesPerCta tiles a CTA (B = 1, L = 4k: 512 tiles, 256
/// CTAs of two tiles).
template <class Cfg>
TileLinePlan plan_tile_line(const Dims& s, int sm_count) {
  TileLinePlan plan{1, GqaMmaConfig::kBlockN};
  const int64_t slots = std::max(1, sm_count) * Cfg::ctas_per_sm(s.d);
  const int64_t want = (tile_line_work(s, plan) + Cfg::kMinTilesPerCta - 1) / Cfg::kMinTilesPerCta;
  plan.ctas = static_cast<int>(std::clamp<int64_t>(want, 1, slots));
  return plan;
}

/// v04's line on its shared-memory budget.
inline TileLinePlan plan_v04(const Dims& s, int sm_count) {
  return plan_tile_line<PersistentGqaConfig>(s, sm_count);
}

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// v05's geometry: v04's CTA on v04's line, with the ring's page indices staged in shared memory
/// (PageIndexRing: kSlots x kEntries i32 and each slot's tile description), two Q tiles (the next
/// segment's Q is fetched by cp.async with the ring, into the tile the segment before it used),
/// and the warps' outputs summed at a segment's end through the stage the segment's last tile
/// just freed (warps x kRows x D fp32 = one stage's bytes exactly), not through Q's bytes.
struct StagedPageConfig {
  using Gqa = GqaMmaConfig;
  using Ring = PageIndexRing;
  static constexpr int64_t kMinTilesPerCta = PersistentGqaConfig::kMinTilesPerCta;
  static constexpr int64_t kTileMetaBytes = 16;  // a slot's (first key, length, KV head, page)
  static constexpr int64_t kStaticSmem = 2 * Gqa::kWarps * Gqa::kRows * 4 + 128;

  static constexpr int64_t q_tile_bytes(int64_t d) { return Gqa::kRows * d * 2; }
  static constexpr int64_t ring_bytes() {
    return Ring::kSlots * (Ring::kEntries * 4 + kTileMetaBytes);
  }
  static constexpr int64_t smem_bytes(int64_t d) {
    return Gqa::stages(d) * Gqa::stage_bytes(d) + 2 * q_tile_bytes(d) + ring_bytes();
  }
  /// The warps' fp32 outputs of one m16 tile: what the freed stage holds at a segment's end.
  static constexpr int64_t reduction_bytes(int64_t d) {
    return int64_t(Gqa::kWarps) * Gqa::kRows * d * 4;
  }
  static constexpr int64_t ctas_per_sm(int64_t d) {
    return Gqa::resident(smem_bytes(d), kStaticSmem);
  }
};

/// v05: v04's plan (every resident CTA, fewer when the batch has under two tiles a CTA) on
/// v05's shared-memory budget.
inline TileLinePlan plan_v05(const Dims& s, int sm_count) {
  return plan_tile_line<StagedPageConfig>(s, sm_count);
}

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// v06's geometry: v03's four math warps on one m16 tile of a KV head's query rows and stages of
/// kBlockN keys, plus one producer warp whose lanes issue TMA boxes of whole pages (each a
/// 2-D box of min(page, 64) key rows x 64 columns, 128-byte swizzled) into an mbarrier ring. The
/// producer reads each stage's block-table entries itself, one stage ahead, so nothing bounds a
/// chunk's length; the warps' partials reuse the stages at the end (as v03's).
struct TmaPagesConfig {
  using Gqa = GqaMmaConfig;
  static constexpr int kConsumerWarps = Gqa::kWarps, kThreads = (kConsumerWarps + 1) * 32;
  /// Pages hold whole 1024-byte swizzle atoms (8 rows of 128 bytes) and tile a stage or are
  /// tiled by it: a power of two from 8 up.
  static constexpr int64_t kMinPage = 8;
  static constexpr int64_t kAlign = 1024;  // the dynamic shared memory's base, rounded up to it
  static constexpr int64_t kStaticSmem = 2 * Gqa::kWarps * Gqa::kRows * 4 + 2 * Gqa::kRows * 4 + 64;

  static constexpr int64_t rows_per_box(int64_t page) {
    return page < Gqa::kBlockN ? page : Gqa::kBlockN;
  }
  /// Stages of kBlockN keys for KV elements of `elem` bytes: v03's count for bf16, twice as many
  /// half-size stages for e4m3 (v08), so the bytes in flight a CTA stay v06's; `ring` > 0 asks
  /// for that many instead (v17: fewer stages a CTA, more CTAs an SM).
  static constexpr int stages(int64_t d, int64_t elem = 2, int64_t ring = 0) {
    return ring > 0 ? static_cast<int>(ring) : Gqa::stages(d) * static_cast<int>(2 / elem);
  }
  static constexpr int64_t stage_bytes(int64_t d, int64_t elem = 2) {
    return 2 * Gqa::kBlockN * d * elem;
  }
  /// The stages, then Q's kRows x d tile (bf16, or f16 for e4m3 KV).
  static constexpr int64_t smem_bytes(int64_t d, int64_t elem = 2, int64_t ring = 0) {
    return kAlign + stages(d, elem, ring) * stage_bytes(d, elem) + Gqa::kRows * d * 2;
  }
  static constexpr int64_t ctas_per_sm(int64_t d, int64_t elem = 2, int64_t ring = 0) {
    return Gqa::resident(smem_bytes(d, elem, ring), kStaticSmem);
  }
  static constexpr bool page_ok(int64_t page) {
    return page >= kMinPage && (page & (page - 1)) == 0;
  }
};

/// v06's split plan with its counters: SplitKvPlan's partials, then one arrival counter per row
/// group of the batch (b x KV heads x row tiles), zeroed when allocated and left at zero.
struct CountedSplitPlan : SplitKvPlan {
  int64_t groups = 0;  ///< counters: row groups of the batch
  constexpr int64_t workspace_floats(int64_t rows, int64_t d) const {
    return max_splits > 1 ? SplitKvPlan::workspace_floats(rows, d) + groups : 0;
  }
};

/// A ragged batch's chunks are at most a slot's mean work over this (plan_split_kv_waves).
inline constexpr int64_t kRaggedChunkDivisor = 2;

/// The chunk that finishes a batch soonest on `slots` resident CTAs, by a wave model: CTAs =
/// units x the sequences' splits; time = max(one CTA, ceil(CTAs / slots) waves x the mean CTA),
/// each CTA charged `overhead` keys for its start and end. The candidates cut the longest
/// sequence into s equal tile multiples (at least min_chunk) for s = 1 up to where a split of
/// the batch's mean work a slot would be; ties go to the longer chunk (fewer partials). A ragged
/// batch (lengths that differ) takes no chunk above its slots' mean work / kRaggedChunkDivisor.
inline SplitKvPlan plan_split_kv_waves(const std::vector<int64_t>& lens, const SplitKvTarget& t,
                                       int64_t overhead) {
  const int64_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
  int64_t total = 0;
  for (int64_t l : lens) total += l;
  const int64_t lo = round_up(std::max<int64_t>(t.min_chunk, 1), t.tile);
  const int64_t per_slot = std::max<int64_t>(1, (total * t.units + t.slots - 1) / t.slots);
  // A ragged batch's CTAs differ in length and start in grid order, not longest first: one of
  // its longest may start last, so its chunks are capped at a fraction of a slot's mean work.
  int64_t min_len = max_len;
  for (int64_t l : lens)
    if (l > 0) min_len = std::min(min_len, l);
  const bool ragged = min_len < max_len;
  const int64_t cap =
      ragged ? std::max(lo, round_up(per_slot / kRaggedChunkDivisor, t.tile)) : INT64_MAX;
  int64_t s_max = std::max<int64_t>(
      1, std::min<int64_t>((max_len + lo - 1) / lo, 2 * ((max_len + per_slot - 1) / per_slot) + 2));
  if (ragged) s_max = std::max(s_max, (max_len + cap - 1) / cap);
  SplitKvPlan best{std::max(lo, round_up(std::max<int64_t>(max_len, 1), t.tile)), 1};
  double best_cost = INFINITY;
  for (int64_t s = 1; s <= s_max; ++s) {
    const int64_t chunk = std::max(lo, round_up((max_len + s - 1) / s, t.tile));
    if (chunk > t.max_chunk || chunk > cap) continue;
    SplitKvPlan p{chunk, 1};
    double ctas = 0, keys = 0;
    for (int64_t l : lens) {
      ctas += p.splits_of(l);
      keys += static_cast<double>(l);
    }
    ctas *= static_cast<double>(t.units);
    keys *= static_cast<double>(t.units);
    const double waves = std::ceil(ctas / static_cast<double>(t.slots));
    const double cost = std::max(static_cast<double>(std::min(chunk, max_len) + overhead),
                                 waves * (keys / ctas + static_cast<double>(overhead)));
    if (cost < best_cost - 1e-9) {
      best_cost = cost;
      best = p;
    }
  }
  best.max_splits = best.splits_of(max_len);
  return best;
}

/// v06 (and v08, elem = 1): the wave model's chunk (64-key tiles, at least two; each CTA charged
/// two tiles of start and end) on the rung's resident CTAs (`ring`: TmaPagesConfig::stages').
inline CountedSplitPlan plan_v06(const Dims& s, int sm_count, int64_t elem = 2, int64_t ring = 0) {
  using Gqa = GqaMmaConfig;
  const int64_t units = s.hkv * Gqa::row_tiles(s);
  CountedSplitPlan p;
  static_cast<SplitKvPlan&>(p) = plan_split_kv_waves(
      context_lengths(s),
      {units, std::max(1, sm_count) * TmaPagesConfig::ctas_per_sm(s.d, elem, ring), Gqa::kBlockN,
       Gqa::kMinChunk},
      2 * Gqa::kBlockN);
  p.groups = s.b * units;
  return p;
}

/// v11 and v12, where they cluster: a row group's splits are one thread-block cluster, merged
/// through distributed shared memory, so a sequence takes at most max_cluster_splits(d) splits
/// and the plan needs no workspace. 16 (Hopper's non-portable size) where two or more CTAs fit an SM, so a cluster
/// needs at most 8 SMs of a GPC; 8 (portable, always launchable) at one CTA an SM (D = 256).
inline constexpr int kMaxClusterSplits = 16;
constexpr int cluster_splits_at(int64_t ctas_per_sm) {
  return ctas_per_sm >= 2 ? kMaxClusterSplits : 8;
}
constexpr int max_cluster_splits(int64_t d, int64_t elem = 2) {
  return cluster_splits_at(TmaPagesConfig::ctas_per_sm(d, elem));
}

/// A plan that merges its splits in a cluster (no workspace) or, where `cluster` is false,
/// through v06's counters (CountedSplitPlan's workspace).
struct ClusterSplitPlan : CountedSplitPlan {
  bool cluster = true;
  constexpr int64_t workspace_floats(int64_t rows, int64_t d) const {
    return cluster ? 0 : CountedSplitPlan::workspace_floats(rows, d);
  }
};

/// Where the cluster merge pays, as measured (2026-12-03_698a305_decode_v11_v12_first,
/// _decode_cluster_sweep, 2026-12-03_2dc7a86_decode_cluster_bound): the batch's lengths are equal
/// (a ragged batch's clusters hold their slots until their longest split ends: 0.74-0.85x), the
/// cluster plan's chunk is at most kClusterMaxChunk keys, where the counter merge's tail is a
/// large share of a CTA's time (B = 1 up to 8k keys: 1.05-1.14x; longer chunks lost or moved
/// between runs by more than they gain), and the launch has at most kClusterMaxClusters clusters:
/// Qwen3-8B's B = 1 makes 8 (one a GPC of the H200's 8) and gains; every batch of 2 to 8
/// sequences with more clusters lost 0.71-0.82x, a second wave of clusters by its size (the
/// clusters that fit a GPC at once were not measured: cudaOccupancyMaxActiveClusters would say).
inline constexpr int64_t kClusterMaxChunk = 512;
inline constexpr int64_t kClusterMaxClusters = 8;

/// Whether a batch's lengths are all equal (false for no sequence).
inline bool uniform_lengths(const std::vector<int64_t>& lens) {
  return !lens.empty() &&
         std::all_of(lens.begin(), lens.end(), [&](int64_t l) { return l == lens.front(); });
}

inline bool cluster_merge_pays(const Dims& s, const std::vector<int64_t>& lens,
                               const SplitKvPlan& cluster_plan,
                               int64_t max_chunk = kClusterMaxChunk,
                               int64_t max_clusters = kClusterMaxClusters) {
  const int64_t clusters = s.b * s.hkv * GqaMmaConfig::row_tiles(s);
  return uniform_lengths(lens) && cluster_plan.chunk <= max_chunk && clusters <= max_clusters;
}

/// The splits a cluster plan takes: plan_v06's wave model with chunks of at least
/// 1 / cluster_splits_at(ctas_per_sm) of the longest of the batch's lengths `lens`.
inline SplitKvPlan cluster_splits(const Dims& s, const std::vector<int64_t>& lens, int sm_count,
                                  int64_t ctas_per_sm) {
  using Gqa = GqaMmaConfig;
  const int64_t units = s.hkv * Gqa::row_tiles(s);
  const int64_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
  const int64_t most = cluster_splits_at(ctas_per_sm);
  const int64_t min_chunk =
      std::max<int64_t>(Gqa::kMinChunk, round_up((max_len + most - 1) / most, Gqa::kBlockN));
  return plan_split_kv_waves(lens,
                             {units, std::max(1, sm_count) * ctas_per_sm, Gqa::kBlockN, min_chunk},
                             2 * Gqa::kBlockN);
}

/// `splits` merged in a cluster (no workspace), or plan_v06's own plan merged through its counters.
inline ClusterSplitPlan clustered(const SplitKvPlan& splits) {
  ClusterSplitPlan p;
  static_cast<SplitKvPlan&>(p) = splits;
  return p;
}
inline ClusterSplitPlan counted(const Dims& s, int sm_count, int64_t elem, int64_t ring = 0) {
  ClusterSplitPlan p;
  static_cast<CountedSplitPlan&>(p) = plan_v06(s, sm_count, elem, ring);
  p.cluster = false;
  return p;
}

/// v11 and v12 (elem as v06's): cluster_splits on the clustered kernel's shared memory (v06's),
/// merged in a cluster where cluster_merge_pays; elsewhere plan_v06's own plan, merged through
/// its counters (v10's and v09's path).
inline ClusterSplitPlan plan_v11(const Dims& s, int sm_count, int64_t elem = 2) {
  const std::vector<int64_t> lens = context_lengths(s);
  const SplitKvPlan c = cluster_splits(s, lens, sm_count, TmaPagesConfig::ctas_per_sm(s.d, elem));
  return cluster_merge_pays(s, lens, c) ? clustered(c) : counted(s, sm_count, elem);
}

/// v13's cluster merge by push: each CTA stores its normalised rows into their owners' shared
/// memory (st.async), so an owner (rank r % splits for row r) receives ceil(rows / splits) rows
/// from each of the sequence's splits into a region of its own beside the stages (they may still
/// be streaming when a peer pushes): kRecvRows rows of d + 1 floats (O, then the lse), then the
/// mbarrier the stores complete on. At D = 128 two CTAs still fit an SM.
struct PushMergeConfig {
  static constexpr int64_t kRecvRows = 16;
  static constexpr int64_t recv_bytes(int64_t d) {
    return round_up(kRecvRows * (d + 1) * 4, 16) + 16;
  }
  static constexpr int64_t smem_bytes(int64_t d, int64_t elem = 2) {
    return TmaPagesConfig::smem_bytes(d, elem) + recv_bytes(d);
  }
  static constexpr int64_t ctas_per_sm(int64_t d, int64_t elem = 2) {
    return GqaMmaConfig::resident(smem_bytes(d, elem), TmaPagesConfig::kStaticSmem);
  }
  /// Whether a row group of `rows` query rows merged over `splits` splits fits the region.
  static constexpr bool fits(int64_t rows, int64_t splits) {
    return (rows + splits - 1) / splits * splits <= kRecvRows;
  }
};

/// v13 (elem 2) and v14 (e4m3, elem 1): plan_v11 with v13's shared memory, clustered only where
/// the rows of a row group (at most kRows; the first row tile has the most) fit PushMergeConfig's
/// region at every sequence's split count (the kernel takes its slots from its own sequence's),
/// and up to kPushClusterMaxChunk keys a chunk: at (1, 16k) (chunks of 1024) the push merge's
/// shorter tail pays for one CTA an SM's stream against the counter plan's two (1.08-1.10x
/// cuDNN, v10 1.00x); at (1, 32k) (2048) it does not, the last of
/// the 128 CTAs' streams ending ~4 us after the counter plan's last (0.98-1.01x, v10 1.00-1.01x:
/// 2026-12-04_54fa11d_decode_v13_long_chunks). Longer chunks cluster where both plans split each
/// sequence in kPushLongSplits = 2, so the two stream alike and differ in the merge only:
/// (16, 8k)'s two splits of 4096 keys (1.00-1.01x cuDNN paired, v10 0.97-0.98x) and (16, 4k)'s of
/// 2048 (1.01x, v10 0.97x); four and eight splits a cluster, with the counter plan's splits too,
/// lost 13% ((8, 8k), (4, 16k): 0.87x, v10 1.00-1.02x; 2026-12-04_6459d2f_decode_v13_pairs).
inline constexpr int64_t kPushClusterMaxChunk = 1024;
/// v17 (e4m3): the counter path's kernel on four 16 KiB stages, three CTAs an SM (v14: six, two),
/// where the swapped stage takes one n8 tile (a KV head's rows <= 8) at D = 128: 120 registers a
/// thread, three CTAs' worth (two n8 tiles take 168: two CTAs, so v14's ring there).
inline constexpr int64_t kThreeCtaRing = 4;
constexpr bool counter_ring_applies(int64_t d, int64_t rows_per_head) {
  return d <= 128 && rows_per_head <= 8;
}
inline constexpr int kPushLongSplits = 2;
/// `counter_ring` > 0 (v17): the counter path's kernel on that many stages a CTA (its plan's
/// resident CTAs to match); the clustered kernel keeps its own.
inline ClusterSplitPlan plan_v13(const Dims& s, int sm_count, int64_t elem = 2,
                                 int64_t counter_ring = 0) {
  const int64_t rows = std::min<int64_t>(GqaMmaConfig::kRows, s.group() * s.qlen);
  const std::vector<int64_t> lens = context_lengths(s);
  const SplitKvPlan c = cluster_splits(s, lens, sm_count, PushMergeConfig::ctas_per_sm(s.d, elem));
  const bool fits = std::all_of(lens.begin(), lens.end(), [&](int64_t len) {
    return PushMergeConfig::fits(rows, std::max(1, c.splits_of(len)));
  });
  if (fits && cluster_merge_pays(s, lens, c, kPushClusterMaxChunk)) return clustered(c);
  // Longer chunks cluster too where both plans split each sequence in two (clusters of two): they
  // stream alike and differ in the merge only.
  const ClusterSplitPlan counter =
      counted(s, sm_count, elem, counter_ring_applies(s.d, s.group() * s.qlen) ? counter_ring : 0);
  const bool long_pairs = cluster_merge_pays(s, lens, c, std::numeric_limits<int64_t>::max(),
                                             std::numeric_limits<int64_t>::max()) &&
                          c.chunk > kPushClusterMaxChunk && c.max_splits == kPushLongSplits &&
                          counter.max_splits == kPushLongSplits;
  return fits && long_pairs ? clustered(c) : counter;
}

}  // namespace klab::decode_attention

namespace klab::decode_attention {

/// v07's geometry: v06's CTA (four math warps on one m16 tile, a producer warp issuing TMA
/// boxes of whole pages into the mbarrier ring) on v04's line. The ring runs on across row
/// groups, so the warps' outputs are summed at a segment's end in their own buffer (kRows x
/// red_stride fp32, after Q's tile), not in the stages.
struct TmaLineConfig {
  using Gqa = GqaMmaConfig;
  using Pages = TmaPagesConfig;
  static constexpr int kThreads = Pages::kThreads;
  static constexpr int64_t kMinTilesPerCta = PersistentGqaConfig::kMinTilesPerCta;
  static constexpr int64_t kStaticSmem =
      2 * Gqa::kWarps * Gqa::kRows * 4 + (kThreads / 32 + 2) * 8 + 2 * 3 * 8 + 64;
  static constexpr int64_t red_bytes(int64_t d) {
    return Gqa::kRows * PersistentGqaConfig::red_stride(d) * 4;
  }
  static constexpr int64_t smem_bytes(int64_t d) {
    return Pages::kAlign + Gqa::stages(d) * Gqa::stage_bytes(d) + Gqa::kRows * d * 2 + red_bytes(d);
  }
  static constexpr int64_t ctas_per_sm(int64_t d) {
    return Gqa::resident(smem_bytes(d), kStaticSmem);
  }
};

/// v07: v04's line (every resident CTA, fewer when the batch has under two tiles a CTA) on v07's
/// shared-memory budget.
inline TileLinePlan plan_v07(const Dims& s, int sm_count) {
  return plan_tile_line<TmaLineConfig>(s, sm_count);
}

/// v16: K's and V's tensor maps (a CUtensorMap is 128 bytes) at the workspace's tail, past the
/// plan's `plan_bytes` rounded up to 128 bytes (a map's alignment is 64).
constexpr size_t kGlobalMapsBytes = 2 * 128;
constexpr size_t global_maps_offset(size_t plan_bytes) { return (plan_bytes + 127) / 128 * 128; }

}  // namespace klab::decode_attention

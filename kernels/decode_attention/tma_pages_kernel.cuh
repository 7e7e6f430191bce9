#pragma once
// The kernel of v06, v10, v11 (bf16 KV, kElem = 2), v08, v09, v12 (e4m3 KV, kElem = 1): a CTA
// holds one tile of 16 of a KV head's query rows and one chunk of a sequence's keys; a producer
// warp gathers the chunk's pages by TMA (tma_pages.cuh) into a ring of 64-key stages on
// mbarriers; four math warps run gqa_mma.cuh's stage (bf16), gqa_mma_e4m3.cuh's (e4m3: Q's tile
// in f16, K's scale in the scores' scale, V's on the output) or, kSwapTiles > 0,
// gqa_swap_ab.cuh's (v09 on e4m3, v10 and v11 on bf16: keys as the mma's M, the rows as
// kSwapTiles n8 tiles, Q in registers); splits are merged in the same launch by the last CTA of a
// row group (partial_merge.cuh) or, kCluster (v11 on bf16, v12 on e4m3, where their plan says
// so; the counter merge elsewhere), through distributed shared memory within the row group's
// cluster (cluster_merge). v06_tma_pages.cu tells the design's history and its measurements,
// v08_fp8_kv.cu what FP8 changes, v09_fp8_swap_ab.cu the swap, v11_cluster_merge.cu the cluster.
#include <cuda_bf16.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/decode_attention/cluster_push_merge.cuh"
#include "kernels/decode_attention/compact_grid.cuh"
#include "kernels/decode_attention/cta_rows.cuh"
#include "kernels/decode_attention/dependent_merge.cuh"
#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/gqa_mma_e4m3.cuh"
#include "kernels/decode_attention/gqa_swap_ab.cuh"
#include "kernels/decode_attention/longest_first.hpp"
#include "kernels/decode_attention/partial_merge.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/steal_units.hpp"
#include "kernels/decode_attention/tma_pages.cuh"
#include "kernels/decode_attention/tma_pages_phases.hpp"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/occupancy.cuh"
#include "klab/device/pdl.cuh"
#include "klab/device/phase_trace.cuh"
#include "klab/harness/device_info.hpp"
#include "klab/harness/phase_trace_hooks.hpp"

namespace klab::decode_attention {

namespace tma_pages_detail {

using Cfg = TmaPagesConfig;
using Gqa = GqaMmaConfig;
constexpr int kBlockN = Gqa::kBlockN, kRows = Gqa::kRows, kThreads = Cfg::kThreads;
constexpr int kConsumerWarps = Cfg::kConsumerWarps, kProducerWarp = kConsumerWarps;
constexpr int kConsumerThreads = kConsumerWarps * 32;
static_assert(kConsumerThreads == Gqa::kThreads, "load_q_tile strides over v03's four warps");

}  // namespace tma_pages_detail

/// The counter path's grid: (split, row group, sequence); v22's compact grid (item, row group, 1)
/// of the splits that exist, in sequence order (compact_grid.cuh); v28's work list, one
/// dimension of (item, row group) with the items the host's, longest first (longest_first.hpp).
/// The last two only where the plan says compact_batch > 0 (a ragged batch).
enum CounterGrid : int { kGridSplits = 0, kGridCompact = 1, kGridWorkList = 2 };
/// The counter path's options (bits; TmaPagesLaunch's kCounter): v31's stage stealing through a
/// global ticket counter, v32's compact tail, v36's merge by a dependent kernel (with the compact
/// tail).
enum CounterPath : int {
  kCounterPlain = 0,
  kCounterSteal = 1,
  kCounterCompactTail = 2,
  kCounterDependentMerge = 4
};

/// The per-KV-head dequantisation scales of an e4m3 cache (fp32, Hkv each); null for bf16.
struct KvScales {
  const float* k = nullptr;
  const float* v = nullptr;
};

/// v11's end of a CTA whose row group's splits form one cluster (rank = split; the sequence's
/// `splits` CTAs call it, the cluster's others have exited, which releases the cluster barrier
/// they would hold up: PTX `exit`): the warps' partials (s_o, s_max, s_sum) merged into this
/// CTA's normalised rows and lse at s_part, a cluster barrier, then the rows r = rank, rank +
/// splits, .. merged over the splits' s_part through distributed shared memory in rank order
/// (merge_partials: the bits v06's counter merge gives) and written to o and lse; a second
/// barrier keeps each CTA's rows alive until its peers have read them.
template <int kD, class Mark>
__device__ __forceinline__ void cluster_merge(Mark&& mark, float* s_part, const float* s_o,
                                              const float (*s_max)[GqaMmaConfig::kRows],
                                              const float (*s_sum)[GqaMmaConfig::kRows], float* s_m,
                                              float* s_s, const SplitOut& out, int64_t bi, int hk,
                                              int row0, int rows, int splits,
                                              const GqaGeometry& g) {
  using namespace tma_pages_detail;
  float* s_part_lse = s_part + kRows * kD;
  merge_warp_rows<kD, kConsumerWarps, kThreads>(s_o, s_max, s_sum, rows,
                                                [&](int r, int d, float o, float lse) {
                                                  s_part[r * kD + d] = o;
                                                  if (d == 0) s_part_lse[r] = lse;
                                                });
  mark(kPhRows);
  device::cluster_sync();  // every CTA's rows written
  mark(kPhPeersMet);
  const int rank = static_cast<int>(device::cluster_ctarank());            // < splits
  const int mine = rows > rank ? (rows - rank + splits - 1) / splits : 0;  // CTA-uniform
  auto row_at = [&](int r) { return rank + r * splits; };
  if (mine > 0)
    merge_partials<kD, kThreads, 8>(
        mine, splits,
        [&](int i, int r) {
          return device::ld_shared_cluster_f32(device::map_shared_rank(&s_part_lse[row_at(r)], i));
        },
        [&](int i, int r, int c4) {
          return device::ld_shared_cluster_f32x4(
              device::map_shared_rank(s_part + row_at(r) * kD + 4 * c4, i));
        },
        [&](int r, int c4, float4 x, float lse) {
          const int64_t row = global_row(bi, hk, row0 + row_at(r), g);
          store_merged4(out.o, out.lse, row, kD, c4, x, lse);
        },
        s_m, s_s, CtaSync{});
  mark(kPhMerged);
  device::cluster_sync();  // peers are done reading this CTA's rows
}

// Block (split, hk * row_tiles + row tile, bi); kThreads threads: four math warps, then the
// producer warp. Dynamic shared memory (its base rounded up to 1024 bytes): kStages x (K tile,
// V tile) of kBlockN x kD elements of kElem bytes, swizzled, then Q's kRows x kD 16-bit tile
// (unused when kSwapTiles > 0: Q's fragments live in registers).
// kPush (v13, with kCluster): the splits merged by cluster_push_merge.cuh, whose receive region
// follows Q's tile; the tensor maps prefetched at the start.
// kStageGroup (v15: 2, v19: 3; on the e4m3 swapped stage of one n8 tile): each math warp takes
// its 16 keys of that many stages at once (gqa_swap_ab_stage_e4m3 with kTiles = kStageGroup), a
// chunk's last stages alone when their count is not a multiple.
// kGlobalMaps (v16): the copies take the tensor maps at global_maps (K's, then V's: copied there
// once by the launch's prepare step, tma_pages_launch) instead of the parameters k_map and
// v_map, after the acquire fence the CUDA guide asks of a map in global memory; prefetched at
// the start as kPush's.
// kRing > 0 (v17's counter path): that many stages in the ring (TmaPagesConfig::stages' ring),
// so more CTAs fit an SM.
// kGrid (CounterGrid): the counter path's grid where the plan's compact_batch > 0: kGridCompact
// (v22): block (item, row group, 0), the items the splits that exist, sequence by sequence
// (compact_grid.cuh); kGridWorkList (v28): block (item x groups + row group), the items read
// from the host's list at aux (packed by pack_work_item), longest first; else (split, row group,
// sequence).
// kEarlyIssue (v23, with kPush): the producer warp initialises the ring's barriers itself and
// issues the first stages (as many as the ring holds) as soon as its table entries arrive, before
// the CTA's barrier that waits for Q's tile and the other barriers.
// kSteal (v25, with kPush): the cluster's CTAs share their sequence's stages (units of kBlockN
// keys) instead of each streaming a fixed chunk: split r first takes units r, r + splits, ..
// (kStages of them, the ring's first fill), then the next unit of a counter in rank 0's shared
// memory (one atom.shared::cluster a stage, issued a stage ahead) until the units run out, so a
// CTA that streams faster takes more of them; the producer tells the math warps each slot's unit
// (s_unit) and ends the ring with a unit of -1. Unclustered (v31, the counter path's kernel on
// the (split, row group, sequence) grid): the same walk, each ticket from a global counter of the
// row group (one atomicAdd a stage, in L2), the `groups` ints after the arrival counters; the CTA
// that merges resets it with its arrival counter.
// kCompactTail (v32, the counter path): the CTA's rows stored as its partial the way the push
// merge computes them (cta_rows.cuh: weights once a row, a float4 a thread), and the merging
// CTA's pass with each row's weights computed once into the free stage memory
// (merge_counted_rows), where rows x splits weights fit there (else merge_partials).
// kDependentMerge (v36, with kCompactTail): the CTA ends once its rows are stored; the splits are
// merged by dependent_merge_kernel, launched programmatically after this one.
// kTableWindow (v38, not with kSteal): the producer takes its page indices from windows of 32
// table columns (TableWindow: a warp load each, the next window requested a window ahead)
// instead of loading each stage's entries one stage ahead.
template <int kD, int kElem, int kSwapTiles = 0, bool kCluster = false, bool kTrace = false,
          bool kPush = false, int kStageGroup = 1, bool kGlobalMaps = false, int kRing = 0,
          int kGrid = kGridSplits, bool kEarlyIssue = false, bool kSteal = false,
          bool kCompactTail = false, bool kDependentMerge = false, bool kTableWindow = false>
__global__ void __launch_bounds__(tma_pages_detail::kThreads)
    tma_pages_kernel(const __grid_constant__ CUtensorMap k_map,
                     const __grid_constant__ CUtensorMap v_map, const __nv_bfloat16* __restrict__ q,
                     const int32_t* __restrict__ seq_lens, const int32_t* __restrict__ block_table,
                     SplitOut out, int* __restrict__ counters, GqaGeometry g, KvScales scales,
                     const void* __restrict__ aux) {
  using namespace tma_pages_detail;
  constexpr bool kE4m3 = kElem == 1, kSwap = kSwapTiles > 0;
  constexpr int kNT = kSwap ? kSwapTiles : 1;
  constexpr int kStages = Cfg::stages(kD, kElem, kRing);
  constexpr uint32_t kTileBytes = kBlockN * kD * kElem;  // K or V of one stage
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  __shared__ float s_max[kConsumerWarps][kRows], s_sum[kConsumerWarps][kRows];
  __shared__ float s_m[kRows], s_s[kRows];
  __shared__ int s_last;
  __shared__ uint32_t s_next;                   // kSteal: rank 0's is the cluster's next unit
  __shared__ int s_unit[kSteal ? kStages : 1];  // kSteal: the unit each slot holds, -1 the end
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + Cfg::kAlign - 1) / Cfg::kAlign * Cfg::kAlign);
  unsigned char* s_q = smem + kStages * 2 * kTileBytes;
  const bool marker = kTrace && threadIdx.x == 0;  // the thread that marks the CTA's phases
  // kPhStart: now, by the marker; the producer's first lane marks its first copy.
  device::PhaseTrace<kPhCount, kTrace> trace(
      marker || (kTrace && threadIdx.x == tma_pages_detail::kProducerWarp * 32), marker);
  auto mark = [&](int phase) { trace.mark(phase); };
  static_assert(!kPush || kCluster, "the push merge is a cluster merge");
  static_assert(!kGlobalMaps || kPush, "kGlobalMaps: fenced and prefetched at kPush's start");
  static_assert(!kEarlyIssue || kPush, "kEarlyIssue: the maps prefetched at kPush's start");
  static_assert(!(kEarlyIssue && kGlobalMaps), "kGlobalMaps' maps are read after the CTA barrier");
  static_assert(
      !kSteal || (kStageGroup == 1 && !kEarlyIssue && (kCluster ? kPush : kGrid == kGridSplits)),
      "kSteal: one stage at a time, issued after the barrier; clustered, the push "
      "merge's cluster; unclustered, the (split, row group, sequence) grid");
  static_assert(!kTableWindow || !kSteal, "kTableWindow: a split's stages in order, not units");
  // kPush: the descriptors' fetch overlaps the inputs' round trip (they are kernel parameters,
  // or kGlobalMaps copied before the launch: not written by a kernel before this one).
  // aux: kGlobalMaps' tensor maps, kGridWorkList's items.
  const auto* const global_maps = static_cast<const CUtensorMap*>(aux);
  const CUtensorMap* const km = kGlobalMaps ? global_maps : &k_map;
  const CUtensorMap* const vm = kGlobalMaps ? global_maps + 1 : &v_map;
  if (kPush && threadIdx.x == kProducerWarp * 32) {
    if constexpr (kGlobalMaps) {  // one thread's acquire; the producer's other lanes copy
      device::fence_tensor_map_acquire(km);  // through the maps only after the CTA's barrier
      device::fence_tensor_map_acquire(vm);  // below (the CUDA guide's "sufficient sync")
    }
    device::prefetch_tensor_map(km);
    device::prefetch_tensor_map(vm);
  }

  // Launched programmatically (attention_block v03), the kernel before it may still be writing
  // q or the new token's k and v: nothing is read before its end (pdl.cuh).
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  static_assert(kGrid == kGridSplits || !kCluster, "a compact grid merges through the counters");
  static_assert(kGrid == kGridSplits || !kGlobalMaps, "aux holds the maps or the work list");
  int split = static_cast<int>(blockIdx.x);
  int64_t bi = blockIdx.z;
  int group = static_cast<int>(blockIdx.y);  // the row group: KV head x row tiles + row tile
  if constexpr (kGrid == kGridCompact) {
    __shared__ int64_t s_scan[kThreads / 32], s_found[2];
    if (out.plan.compact_batch > 0 &&
        !find_compact_item<kThreads>(seq_lens, out.plan, blockIdx.x, s_scan, s_found, bi, split))
      return;  // past the batch's items
  }
  if constexpr (kGrid == kGridWorkList)
    if (out.plan.compact_batch > 0) {  // one round trip before the length's
      const int groups = g.hkv * g.row_tiles;
      const uint32_t item = __ldg(static_cast<const uint32_t*>(aux) + blockIdx.x / groups);
      group = static_cast<int>(blockIdx.x % groups);
      unpack_work_item(item, bi, split);
    }
  const int hk = group / g.row_tiles;
  const int row0 = (group % g.row_tiles) * kRows;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  // One round trip before the first copy: the length, Q's rows and the first stage's table
  // entries are loaded together (none needs another).
  const int64_t len = seq_lens[bi];
  // kSteal: the split's first unit; its keys run to the sequence's end (units are handed out).
  const int64_t j0 = kSteal ? int64_t(split) * kBlockN : out.plan.key_begin(split);
  const int32_t* table_row = block_table + bi * g.max_pages;
  const uint32_t sq = device::smem_addr(s_q);
  int next = -1;                    // the producer lane's page of the stage it issues next
  TableWindow window;               // kTableWindow: the producer's windows of table entries
  SwapAbQ<kD, kNT, kElem> q_frags;  // kSwap: the math warps' Q, each warp's own copy
  if (warp == kProducerWarp) {
    if constexpr (kTableWindow)
      window.start(table_row, j0, lane, g);
    else
      next = StagePages::entry_ahead(table_row, j0, lane, g);
  } else if constexpr (kSwap)
    q_frags.load(q, bi, hk, row0, g, lane);
  else if constexpr (kE4m3)
    load_q_tile_e4m3<kD>(sq, q, bi, hk, row0, g, tid);
  else
    load_q_tile<kD>(sq, q, bi, hk, row0, g, tid);
  const int splits = out.plan.splits_of(len);
  if (marker) {  // kTrace: the length arrived (the mark waits for it)
    asm volatile("" ::"l"(len));
    mark(kPhLength);
  }
  // The grid is sized for the longest sequence: a split past this one's has no keys. kCluster:
  // its exit releases the cluster barriers it would hold up, and no peer reads its memory.
  if (split >= splits) {
    if (marker) mark(kPhEnd);
    return;
  }
  const int64_t j1 = kSteal ? len : out.plan.key_end(split, len);
  const int tiles = j1 > j0 ? static_cast<int>((j1 - j0 + kBlockN - 1) / kBlockN) : 0;
  const PushRecv<kD> recv(s_q + kRows * kD * 2);  // kPush only

  // The producer: stage i + 1's table entries are loaded (one a lane) before the wait for
  // stage i's slot, so a table load is never on a refill's path; kTableWindow: stage i's come
  // from the window loaded a window ahead.
  auto stage_at = [&](int64_t k0) { return StagePages{k0, min(j1, k0 + kBlockN)}; };
  auto stage = [&](int i) { return stage_at(j0 + int64_t(i) * kBlockN); };
  // The i-th stage's slot, once the math warps have handed it back (the ring's first fill waits
  // for none).
  auto wait_slot = [&](int i) {
    if (i >= kStages) device::mbarrier_wait(&empty[i % kStages], ((i / kStages) - 1) & 1);
  };
  // The i-th stage `st` into its slot, from page `pool_page` (its table entry): the wait for the
  // slot, then the copies; kSteal: lane 0 writes the slot's unit first (the math warps read it
  // after the stage's barrier, which lane 0's arrival releases).
  auto put = [&](int i, const StagePages& st, int pool_page, int unit) {
    const int slot = i % kStages;
    wait_slot(i);
    if constexpr (kSteal)
      if (lane == 0) s_unit[slot] = unit;
    if (kTrace && i == 0 && lane == 0) {
      mark(kPhFirstReady);
      asm volatile("" ::"r"(pool_page));  // the table entry the copies use, waited for
      mark(kPhFirstEntry);
    }
    // kTrace: lane 0 marks the first stage's barrier armed and its first copy.
    st.template issue<kD, kElem>(km, vm, smem + slot * 2 * kTileBytes, &full[slot], pool_page, hk,
                                 lane, g, [&](int at) {
                                   if (kTrace && i == 0 && lane == 0)
                                     mark(at == 0 ? kPhArmed : kPhFirstCopy);
                                 });
    if (kTrace && i == 0 && lane == 0) mark(kPhFirstIssue);
  };
  auto produce = [&](int i) {
    if constexpr (kTableWindow) {
      const StagePages st = stage(i);
      put(i, st, window.entry(st, lane, g), 0);
      return;
    }
    const int pool_page = next;
    if (i + 1 < tiles) next = stage(i + 1).entry(table_row, lane, g);
    put(i, stage(i), pool_page, 0);
  };
  // kSteal: the producer's loop over the units this CTA takes. The counter's first add waits for
  // the cluster's barrier (rank 0's s_next initialised); the producer warp's threads then skip
  // that wait in the push merge (cluster_waited).
  bool cluster_waited = false;
  // (kSteal: j1 is the sequence's length, so stage_at(unit's first key) is the unit's stage.)
  // The counter path's row group: its arrival counter, and (kSteal) its ticket counter, the
  // grid's `groups` ints past the arrival counters.
  auto arrival_counter = [&] { return counters + bi * (int64_t(g.hkv) * g.row_tiles) + group; };
  auto ticket_counter = [&] { return arrival_counter() + int64_t(gridDim.y) * gridDim.z; };
  auto produce_stolen = [&](int rank, int splits_of_seq) {
    static_assert(kStages >= 2, "a split's first two stages are fixed (StealWalk)");
    const StealUnits units(splits_of_seq, kStages, j1, kBlockN);
    uint32_t counter = 0;    // clustered: rank 0's s_next
    int* tickets = nullptr;  // unclustered: the row group's ticket counter
    if constexpr (kCluster)
      counter = device::map_shared_rank(&s_next, 0);
    else
      tickets = ticket_counter();
    auto span = [&](int u) { return stage_at(int64_t(u) * kBlockN); };
    StealWalk walk(units, rank);
    while (!walk.done()) {
      // Stage at + 2's ticket: the add issued now, its answer read after this stage's copies.
      const bool take = walk.wants_ticket();
      uint32_t raw = 0;
      if (take) {
        if constexpr (kCluster) {
          if (!cluster_waited) {
            device::cluster_wait();
            cluster_waited = true;
          }
          if (lane == 0) raw = device::atom_add_shared_cluster_u32(counter, 1);
        } else if (lane == 0) {
          raw = static_cast<uint32_t>(atomicAdd(tickets, 1));
        }
      }
      const int pool_page = next;
      if (units.valid(walk.u_next)) next = span(walk.u_next).entry(table_row, lane, g);
      put(walk.at, span(walk.u), pool_page, walk.u);
      walk.advance(take ? __shfl_sync(0xffffffffu, raw, 0) : 0u);
    }
    wait_slot(walk.at);  // the end: a slot of unit -1, arrived on
    if (lane == 0) {
      s_unit[walk.at % kStages] = -1;
      device::mbarrier_arrive(&full[walk.at % kStages]);
    }
  };
  auto init_ring = [&] {
    for (int s = 0; s < kStages; ++s) {
      device::mbarrier_init(&full[s], 1);
      device::mbarrier_init(&empty[s], kConsumerWarps);
    }
  };
  int first_late = 0;  // the first stage the producer issues after the CTA's barrier
  if constexpr (kEarlyIssue) {
    // The ring's barriers are the producer's to initialise: it arms them before the CTA's
    // barrier, which is what makes them initialised for the math warps. The ring is empty, so
    // its first kStages stages wait for no slot.
    if (warp == kProducerWarp) {
      if (lane == 0) {  // the init, then the proxy fence before the TMA completes on them
        init_ring();
        device::fence_mbarrier_init();
        device::fence_proxy_async_shared();
      }
      __syncwarp();
      first_late = min(tiles, kStages);
      for (int i = 0; i < first_late; ++i) produce(i);
    }
  }
  if (tid == 0) {
    if constexpr (!kEarlyIssue) init_ring();
    if constexpr (kSteal && kCluster) s_next = 0;  // rank 0's: released by the arrival below
    if constexpr (kPush)
      if (out.plan.max_splits > 1) recv.init(min(kRows, g.rows_per_head - row0), splits, split);
    device::fence_mbarrier_init();
  }
  __syncthreads();  // the barriers initialised, Q's tile stored
  // kPush: the peers may store into this CTA once it has arrived (cluster_push_merge waits);
  // thread 0's fence_mbarrier_init orders its receive barrier's initialisation before it.
  if constexpr (kPush)
    if (out.plan.max_splits > 1) {
      if constexpr (kSteal)
        device::cluster_arrive_release();  // rank 0's s_next, before any peer adds to it
      else
        device::cluster_arrive_relaxed();
    }
  if (marker) mark(kPhInputs);

  if (warp == kProducerWarp) {
    if (!kPush && lane == 0) {
      device::prefetch_tensor_map(&k_map);
      device::prefetch_tensor_map(&v_map);
    }
    if constexpr (kSteal)
      produce_stolen(split, splits);
    else
      for (int i = first_late; i < tiles; ++i) produce(i);
  }

  // The math warps: rows lane / 4 and lane / 4 + 8 see keys below lim[h] (kSwap: rows
  // 8n + 2 (lane % 4) + e below swap_lim[n][e]).
  int64_t lim[2], swap_lim[kNT][2];
  if constexpr (kSwap)
    swap_ab_row_limits(swap_lim, lane, row0, j1, len, g);
  else
    row_limits(lim, lane, row0, j1, len, g);
  std::conditional_t<kSwap, SwapAbWarpState<kD, kNT>, GqaWarpState<kD>> state;
  state.reset();
  if (warp < kConsumerWarps) {
    using Tile = TmaKvTile<kD, kElem>;
    // e4m3: K's scale joins the scores' (one fp32 product), V's multiplies the output below.
    const float scale_log2 = kE4m3 ? g.scale_log2 * scales.k[hk] : g.scale_log2;
    const uint32_t s_kv = device::smem_addr(smem);
    // v15's pairs (v19's triples) on the e4m3 swapped stage of one n8 tile (125 registers at
    // D = 128 for pairs, v14's 120); two tiles' pairs took 202, whose allocation (208 a thread)
    // would leave one CTA an SM, and D = 256 above 8 rows runs the padded stage: there one stage
    // at a time, as v14.
    constexpr int kGroup = kSwap && kE4m3 && kSwapTiles == 1 ? kStageGroup : 1;
    static_assert(kGroup >= 1 && kGroup < kStages, "a group leaves the producer a stage ahead");
    int first_single = 0;  // kGroup > 1: stages i .. i + kGroup - 1 together, then the rest alone
    if constexpr (kGroup > 1) {
      for (; first_single + kGroup - 1 < tiles; first_single += kGroup) {
        const int i = first_single;
        int slot[kGroup];
#pragma unroll
        for (int t = 0; t < kGroup; ++t) slot[t] = (i + t) % kStages;
        uint32_t sk[kGroup], sv[kGroup];
        int64_t key_base[kGroup];
#pragma unroll
        for (int t = 0; t < kGroup; ++t) {
          device::mbarrier_wait(&full[slot[t]], ((i + t) / kStages) & 1);
          sk[t] = s_kv + slot[t] * 2 * kTileBytes;
          sv[t] = sk[t] + kTileBytes;
          key_base[t] = j0 + int64_t(i + t) * kBlockN;
          zero_v_rows_past<kD, kElem>(sv[t], warp, lane, key_base[t], j1);
        }
        gqa_swap_ab_stage_e4m3<kD, kNT, Tile, kGroup>(state, q_frags, sk, sv, lane, warp * 16,
                                                      key_base, swap_lim, scale_log2);
        __syncwarp();
        if (lane == 0) {
#pragma unroll
          for (int t = 0; t < kGroup; ++t) device::mbarrier_arrive(&empty[slot[t]]);
        }
      }
    }
    for (int i = first_single; kSteal || i < tiles; ++i) {
      const int slot = i % kStages;
      device::mbarrier_wait(&full[slot], (i / kStages) & 1);
      int64_t key_base = j0 + int64_t(i) * kBlockN;
      if constexpr (kSteal) {  // the slot's unit, written before the barrier's arrival
        const int unit = s_unit[slot];
        if (unit < 0) break;
        key_base = int64_t(unit) * kBlockN;
      }
      if (marker && i == 0) mark(kPhFirstFull);
      const uint32_t sk = s_kv + slot * 2 * kTileBytes, sv = sk + kTileBytes;
      zero_v_rows_past<kD, kElem>(sv, warp, lane, key_base, j1);
      if constexpr (kSwap && kE4m3)
        gqa_swap_ab_stage_e4m3<kD, kNT, Tile>(state, q_frags, {sk}, {sv}, lane, warp * 16,
                                              {key_base}, swap_lim, scale_log2);
      else if constexpr (kSwap)
        gqa_swap_ab_stage_bf16<kD, kNT, Tile>(state, q_frags, sk, sv, lane, warp * 16, key_base,
                                              swap_lim, scale_log2);
      else if constexpr (kE4m3)
        gqa_mma_stage_e4m3<kD, Tile>(state, sq, sk, sv, lane, warp * 16, key_base, lim, scale_log2);
      else
        gqa_mma_stage<kD, Tile>(state, sq, sk, sv, lane, warp * 16, key_base, lim, scale_log2);
      __syncwarp();
      if (lane == 0) device::mbarrier_arrive(&empty[slot]);
    }
    if constexpr (kE4m3) state.scale(scales.v[hk]);
    if (marker) mark(kPhLastDone);
  }
  __syncthreads();  // every stage consumed: they hold the warps' partials now

  float* s_o = reinterpret_cast<float*>(smem);
  constexpr int kStride = static_cast<int>(GqaMmaConfig::merge_stride(kD));
  static_assert(kConsumerWarps * kRows * kStride * 4 <= kStages * 2 * int(kTileBytes),
                "the warps' partials fit in the stages");
  if (warp < kConsumerWarps) {
    if constexpr (kSwap)
      store_swap_ab_partial<kE4m3>(state, lane, s_o + warp * kRows * kStride, kStride, s_max[warp],
                                   s_sum[warp]);
    else
      store_gqa_partial<kE4m3>(state, lane, s_o + warp * kRows * kStride, kStride, s_max[warp],
                               s_sum[warp]);
  }
  const int rows = min(kRows, g.rows_per_head - row0);
  if (marker) mark(kPhPartials);
  if constexpr (kCluster) {
    static_assert(
        (kConsumerWarps * kRows * kStride + kRows * (kD + 1)) * 4 <= kStages * 2 * int(kTileBytes),
        "the warps' partials and the CTA's rows fit in the stages");
    if (kPush && out.plan.max_splits > 1) {
      cluster_push_merge<kD, kConsumerWarps, kThreads>(
          [&](int phase) {
            if (marker) mark(phase);
          },
          recv, s_o, s_max, s_sum, out, bi, hk, row0, rows, splits, g, cluster_waited);
      if (marker) mark(kPhEnd);
      return;
    }
    if (out.plan.max_splits > 1) {
      cluster_merge<kD>(
          [&](int phase) {
            if (marker) mark(phase);
          },
          s_o + kConsumerWarps * kRows * kStride, s_o, s_max, s_sum, s_m, s_s, out, bi, hk, row0,
          rows, splits, g);
      if (marker) mark(kPhEnd);
      return;
    }
  }
  static_assert(!kCompactTail || !kCluster, "kCompactTail: the counter path's tail");
  static_assert(!kDependentMerge || (kCompactTail && !kSteal),
                "kDependentMerge: the compact tail's rows, no tickets to reset");
  if constexpr (kCompactTail)
    store_cta_rows<kD, kConsumerWarps, kThreads>(s_o, s_max, s_sum, out, bi, hk, row0, rows, split,
                                                 splits, g);
  else
    merge_warp_rows<kD, kConsumerWarps, kThreads>(
        s_o, s_max, s_sum, rows, SplitRowsOut<kD>{out, bi, hk, row0, split, splits, g});
  if (marker) mark(kPhRows);
  if (splits == 1 || kDependentMerge) {  // kDependentMerge: the merge kernel takes the partials
    if (marker) mark(kPhEnd);
    return;
  }

  // The arrival: the partial's stores, a fence, a barrier, one atomic; the last split to arrive
  // sees every partial through the others' fences and its own.
  int* counter = arrival_counter();
  __threadfence();
  __syncthreads();
  if (tid == 0) s_last = atomicAdd(counter, 1) == splits - 1;
  __syncthreads();
  if (marker) mark(kPhPeersMet);
  if (!s_last) {
    if (marker) mark(kPhEnd);
    return;
  }
  __threadfence();
  auto row_of = [&](int r) { return global_row(bi, hk, row0 + r, g); };
  auto lse_at = [&](int i, int r) {
    return __ldcg(out.ws_lse + out.plan.partial_index(row_of(r), i));
  };
  auto o_at = [&](int i, int r, int c4) {
    return __ldcg(
        reinterpret_cast<const float4*>(out.ws_o + out.plan.partial_index(row_of(r), i) * kD) + c4);
  };
  auto store = [&](int r, int c4, float4 x, float lse) {
    store_merged4(out.o, out.lse, row_of(r), kD, c4, x, lse);
  };
  // kCompactTail: the weights in the stage memory past the warps' partials (every stage consumed).
  constexpr int kWeightRoom =
      (kStages * 2 * int(kTileBytes) - kConsumerWarps * kRows * kStride * 4) / 4;
  if (kCompactTail && rows * splits <= kWeightRoom)
    merge_counted_rows<kD, kThreads, 8>(rows, splits, lse_at, o_at, store,
                                        s_o + kConsumerWarps * kRows * kStride, s_m);
  else
    merge_partials<kD, kThreads, 8>(rows, splits, lse_at, o_at, store, s_m, s_s, CtaSync{});
  if (marker) mark(kPhMerged);
  // For the next launch (kSteal: every CTA of the group took its last ticket before arriving).
  if (tid == 0) {
    *counter = 0;
    if constexpr (kSteal) *ticket_counter() = 0;
  }
  if (marker) mark(kPhEnd);
}

static_assert(kGlobalMapsBytes == 2 * sizeof(CUtensorMap) && alignof(CUtensorMap) <= 128,
              "v16's maps at the workspace's tail (rung_plans.hpp)");

/// What a rung of the TMA-fed kernel turns on (a C++20 class template argument, named field by
/// field at each rung): the launch's choices, from which it derives the template arguments of
/// its kernels (the clustered one and the counter path's). cluster_merge_variant_on tells each
/// field. (The kernel keeps positional template parameters: nvcc's host stubs cannot name a
/// class-type template argument of a kernel in a namespace.)
struct TmaRung {
  int elem = 2;                 ///< the KV element's bytes: 2 bf16, 1 e4m3
  bool swap_ab = false;         ///< gqa_swap_ab.cuh's stages (v09, v10 and the cluster rungs)
  bool push = false;            ///< v13
  int stage_group = 1;          ///< v15, v19
  bool global_maps = false;     ///< v16
  int counter_ring = 0;         ///< v17
  int grid = kGridSplits;       ///< CounterGrid: v22, v28
  bool early_issue = false;     ///< v23
  bool one_cta_an_sm = false;   ///< v24 (the variant's, not the launch's)
  bool steal = false;           ///< v25 (the clustered kernel)
  int counter = kCounterPlain;  ///< CounterPath bits: v31, v32, v36
  bool table_window = false;    ///< v38, v39
};

/// The kernel's arguments, resolved once (prepare): the tensor maps over the pools, the plan;
/// kSwapAb picks gqa_swap_ab.cuh's stages (v09, v10), in one n8 tile when a KV head has at most 8
/// query rows, two above (at D = 256 the padded stage of v06 or v08 instead: two tiles' state
/// spills there).
template <TmaRung kR, bool kCluster = false>
struct TmaPagesLaunch {
  static constexpr int kElem = kR.elem, kStageGroup = kR.stage_group;
  static constexpr int kCounterRing = kR.counter_ring, kGrid = kR.grid, kCounter = kR.counter;
  static constexpr bool kSwapAb = kR.swap_ab, kPush = kR.push, kGlobalMaps = kR.global_maps;
  static constexpr bool kEarlyIssue = kR.early_issue, kSteal = kR.steal;
  static constexpr bool kTableWindow = kR.table_window;
  CUtensorMap k_map, v_map;
  const __nv_bfloat16* q;
  const int32_t *seq_lens, *block_table;
  SplitOut out;
  int* counters;
  GqaGeometry g;
  KvScales scales;
  int64_t b, d;
  bool cluster = false;  // kCluster rungs: the plan merges in a cluster (else through counters)
  bool programmatic = false;  // LaunchArgs::programmatic: may start before the previous kernel ends
  /// kTraceable (v11, v13): the traced kernels (phase marks for `klab timeline`), not the rung's.
  bool traced = false;
  /// kGlobalMaps (v16): where k_map and v_map live in device memory for the clustered kernel
  /// (the workspace's tail, global_maps_offset), copied there by upload.
  CUtensorMap* global_maps = nullptr;
  /// kGrid (v22, v28): the counter path's grid holds these items (every sequence's splits; the
  /// plan's compact_batch sequences) instead of max_splits a sequence.
  int64_t compact_items = 0;
  /// kGridWorkList (v28): where upload writes the items, longest first (packed_work_list), in
  /// the workspace (work_list_layout); null where the grid is not a list.
  uint32_t* work_list_at = nullptr;
  /// v24: the clustered launch asks for this much dynamic shared memory where it is more than its
  /// own and the launch's clusters all fit at once at that size (one CTA an SM: each cluster on
  /// as many SMs as it has CTAs); 0, or where they would not fit, the kernel's own size.
  int cluster_smem_floor = 0;
  static constexpr bool kTraceable = kCluster && kElem == 2;
  static constexpr bool kDependentMerge = (kCounter & kCounterDependentMerge) != 0;
  static_assert(!kDependentMerge || ((kCounter & kCounterCompactTail) != 0 && !kSteal &&
                                     (kCounter & kCounterSteal) == 0),
                "v36's dependent merge: the compact tail's rows, no tickets");

  /// What the kernel reads from the workspace that the host builds, copied on `stream`
  /// (split_kv_variant: prepare once, waiting for the copy, since the timed launches may run on
  /// another stream; the launch without prepare before each kernel, in stream order):
  /// kGlobalMaps' k_map and v_map at global_maps; kGridWorkList's items at work_list_at, from
  /// the batch's lengths read back from the device (a serving engine's planner holds them on the
  /// host; here the device tensor is the truth, so the list is the launch's own: a read-back and
  /// a stream sync, once in prepare, where the harness always builds its launches; a launch
  /// without prepare pays them each time and cannot be captured into a graph). A copy from
  /// pageable memory is staged before the call returns, so the sources may go.
  void upload(cudaStream_t stream, bool wait) const {
    if constexpr (kGlobalMaps) {
      const CUtensorMap maps[2] = {k_map, v_map};
      KLAB_CUDA_CHECK(
          cudaMemcpyAsync(global_maps, maps, sizeof(maps), cudaMemcpyHostToDevice, stream));
    }
    if (work_list_at != nullptr) {
      std::vector<int32_t> lens32(static_cast<size_t>(b));
      KLAB_CUDA_CHECK(cudaMemcpyAsync(lens32.data(), seq_lens, lens32.size() * sizeof(int32_t),
                                      cudaMemcpyDeviceToHost, stream));
      KLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<int64_t> lens(lens32.begin(), lens32.end());
      const std::vector<WorkItem> items = longest_first_items(out.plan, lens);
      const bool planned = int64_t(items.size()) == compact_items &&
                           std::all_of(items.begin(), items.end(), [&](const WorkItem& w) {
                             return w.split < out.plan.max_splits;
                           });
      KLAB_CHECK(planned, "decode_attention: the batch's lengths are not the plan's");
      const std::vector<uint32_t> list = packed_work_list(items);
      KLAB_CUDA_CHECK(cudaMemcpyAsync(work_list_at, list.data(), list.size() * sizeof(uint32_t),
                                      cudaMemcpyHostToDevice, stream));
    }
    if (wait && (kGlobalMaps || work_list_at != nullptr))
      KLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  /// Traced from now on, its marks into `slots` (LaunchArgs::phase_trace; null: untraced).
  void trace_into(unsigned long long* slots) {
    if constexpr (kTraceable) {
      traced = slots != nullptr;
      device::set_phase_trace(slots);
    }
  }

  template <int kD, int kSwapTiles>
  void enqueue(cudaStream_t stream) const {
    if constexpr (kTraceable)
      if (traced) return enqueue_as<kD, kSwapTiles, true>(stream);
    enqueue_as<kD, kSwapTiles, false>(stream);
  }
  template <int kD, int kSwapTiles, bool kTrace>
  void enqueue_as(cudaStream_t stream) const {
    using tma_pages_detail::kThreads;
    // kCounterRing (v17): the unclustered kernel's ring where plan_v13 counted on it (one n8
    // tile at D = 128: counter_ring_applies); the clustered kernels keep their own.
    constexpr int kRing = kSwapTiles == 1 && counter_ring_applies(kD, 8) ? kCounterRing : 0;
    constexpr auto kernel =  // the counter path's: no cluster, push, maps or early issue
        tma_pages_kernel<kD, kElem, kSwapTiles, /*kCluster*/ false, kTrace, /*kPush*/ false,
                         kStageGroup, /*kGlobalMaps*/ false, kRing, kGrid, /*kEarlyIssue*/ false,
                         /*kSteal*/ (kCounter & kCounterSteal) != 0,
                         /*kCompactTail*/ (kCounter & kCounterCompactTail) != 0, kDependentMerge,
                         kTableWindow>;
    const int smem = static_cast<int>(TmaPagesConfig::smem_bytes(kD, kElem));
    const dim3 grid(static_cast<unsigned>(out.plan.max_splits),
                    static_cast<unsigned>(g.hkv * g.row_tiles), static_cast<unsigned>(b));
    dim3 counter_grid = grid;
    if (kGrid == kGridCompact && out.plan.compact_batch > 0)
      counter_grid =
          dim3(static_cast<unsigned>(compact_items), static_cast<unsigned>(g.hkv * g.row_tiles), 1);
    if (kGrid == kGridWorkList && out.plan.compact_batch > 0)
      counter_grid = dim3(static_cast<unsigned>(compact_items * g.hkv * g.row_tiles), 1, 1);
    if constexpr (kCluster) {
      if (cluster && out.plan.max_splits > 1) {
        constexpr auto clustered =  // no ring of its own, compact grid, tail or merge kernel
            tma_pages_kernel<kD, kElem, kSwapTiles, /*kCluster*/ true, kTrace, kPush, kStageGroup,
                             kGlobalMaps, /*kRing*/ 0, kGridSplits, kEarlyIssue, kSteal,
                             /*kCompactTail*/ false, /*kDependentMerge*/ false, kTableWindow>;
        int csmem = kPush ? static_cast<int>(PushMergeConfig::smem_bytes(kD, kElem)) : smem;
        if (cluster_smem_floor > csmem && clusters_fit<clustered>(grid, cluster_smem_floor))
          csmem = cluster_smem_floor;
        device::opt_in_dynamic_smem<clustered>(csmem);
        enqueue_clusters<clustered>(grid, csmem,
                                    kPush
                                        ? cluster_splits_at(PushMergeConfig::ctas_per_sm(kD, kElem))
                                        : max_cluster_splits(kD, kElem),
                                    stream);
        KLAB_CHECK_LAUNCH();
        return;
      }
    }
    const int counter_smem = static_cast<int>(TmaPagesConfig::smem_bytes(kD, kElem, kRing));
    device::opt_in_dynamic_smem<kernel>(counter_smem);
    if constexpr (kRing > 0) {  // v17's plan counts on the ring's CTAs an SM: say so if they fail
      static const bool fits =
          device::resident_blocks_per_sm(kernel, tma_pages_detail::kThreads, counter_smem) >=
          TmaPagesConfig::ctas_per_sm(kD, kElem, kRing);
      KLAB_CHECK(fits, "decode_attention: the ring's kernel holds fewer CTAs an SM than its plan");
    }
    launch_with<kernel>(counter_grid, counter_smem, 0, stream);
    KLAB_CHECK_LAUNCH();
    if constexpr (kDependentMerge) {
      const int64_t rows_per_seq = int64_t(g.qlen) * g.hq;
      launch_dependent_merge<kD>(out, seq_lens, b * rows_per_seq, rows_per_seq, stream);
    }
  }
  /// kKernel on `grid`, in clusters of `cluster_x` CTAs along x (0: none), programmatically when
  /// asked.
  template <auto kKernel>
  void launch_with(dim3 grid, int smem, unsigned cluster_x, cudaStream_t stream) const {
    const device::LaunchAttributes attrs(cluster_x, programmatic);
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(tma_pages_detail::kThreads);
    config.dynamicSmemBytes = static_cast<size_t>(smem);
    config.stream = stream;
    attrs.apply(config);
    KLAB_CUDA_CHECK(cudaLaunchKernelEx(&config, kKernel, k_map, v_map, q, seq_lens, block_table,
                                       out, counters, g, scales,
                                       kGlobalMaps ? static_cast<const void*>(global_maps)
                                                   : static_cast<const void*>(work_list_at)));
  }
  /// kKernel may launch clusters of up to 16 CTAs (Hopper's non-portable size).
  template <auto kKernel>
  static void allow_non_portable_clusters() {
    static const bool non_portable = [] {
      KLAB_CUDA_CHECK(
          cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
      return true;
    }();
    (void)non_portable;
  }
  /// v11, v13: a row group's splits are one cluster along x (up to 16: the non-portable size).
  template <auto kKernel>
  void enqueue_clusters(dim3 grid, int smem, int max_splits, cudaStream_t stream) const {
    KLAB_CHECK(static_cast<int>(grid.x) <= max_splits,
               "decode_attention: a cluster merge of more splits than a cluster holds");
    allow_non_portable_clusters<kKernel>();
    launch_with<kKernel>(grid, smem, grid.x, stream);
  }
  /// v24: whether every cluster of `grid` (clusters of grid.x along x) is resident at once with
  /// `smem` bytes of dynamic shared memory a CTA (cudaOccupancyMaxActiveClusters), asked once per
  /// kernel, grid and size.
  template <auto kKernel>
  bool clusters_fit(dim3 grid, int smem) const {
    static std::map<std::tuple<unsigned, unsigned, unsigned, int>, bool> known;
    const auto key = std::make_tuple(grid.x, grid.y, grid.z, smem);
    if (const auto it = known.find(key); it != known.end()) return it->second;
    allow_non_portable_clusters<kKernel>();
    device::opt_in_dynamic_smem<kKernel>(smem);
    const device::LaunchAttributes attrs(grid.x, false);
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(tma_pages_detail::kThreads);
    config.dynamicSmemBytes = static_cast<size_t>(smem);
    attrs.apply(config);
    int clusters = 0;
    KLAB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kKernel, &config));
    return known[key] = int64_t(clusters) >= int64_t(grid.y) * grid.z;
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() {
      if constexpr (kD * kElem % 128 != 0)  // can_implement refuses it first
        KLAB_CHECK(false, "decode_attention: rows of whole 128-byte swizzle blocks only");
      else if constexpr (!kSwapAb)
        enqueue<kD, 0>(stream);
      else if (g.rows_per_head <= 8)
        enqueue<kD, 1>(stream);
      else if constexpr (kD >= 256)  // two n8 tiles of 256 dims spill: the padded stage
        enqueue<kD, 0>(stream);
      else
        enqueue<kD, 2>(stream);
    });
  }
};

/// v24: dynamic shared memory that leaves no room for a second CTA on the SM (half the SM's:
/// two such CTAs and their static and reserved shared memory exceed it), for a kernel whose own
/// need is below it.
inline int one_cta_an_sm_smem() { return static_cast<int>(device_info().smem_per_sm / 2); }

/// The launch of problem p on buffers b under `plan` (k_scale and v_scale read for e4m3). A
/// ClusterSplitPlan (v11, v12, v13) builds the clustered kernel too (kPush: v13's merge) and says
/// whether its splits merge in a cluster, with no workspace, or through v06's counters; any other
/// plan uses the counters.
template <TmaRung kR, typename Plan, bool kCluster = std::is_same_v<Plan, ClusterSplitPlan>>
TmaPagesLaunch<kR, kCluster> tma_pages_launch(const Problem& p, Buffers& b, const Plan& plan) {
  static_assert(!kR.one_cta_an_sm,
                "one CTA an SM is cluster_merge_variant_on's setting (cluster_smem_floor)");
  using Launch = TmaPagesLaunch<kR, kCluster>;
  constexpr int kElem = kR.elem, kGrid = kR.grid;
  constexpr bool kGlobalMaps = kR.global_maps;
  bool cluster = false;
  if constexpr (kCluster) cluster = plan.cluster;
  const Dims s = dims_of(p);
  CUtensorMap* global_maps = nullptr;
  if constexpr (kGlobalMaps) {
    const size_t at = global_maps_offset(sizeof(float) *
                                         static_cast<size_t>(plan.workspace_floats(s.rows(), s.d)));
    KLAB_CHECK(b.workspace != nullptr && b.workspace_bytes >= at + kGlobalMapsBytes,
               "decode_attention: the workspace has no room for the tensor maps");
    global_maps = reinterpret_cast<CUtensorMap*>(static_cast<unsigned char*>(b.workspace) + at);
    KLAB_CHECK(reinterpret_cast<uintptr_t>(global_maps) % alignof(CUtensorMap) == 0,
               "decode_attention: the workspace's tensor maps are not 64-byte aligned");
  }
  SplitOut out = split_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"),
                           cluster ? nullptr : b.workspace, plan, s.rows(), s.d);
  int64_t compact_items = 0;             // kGrid: the counter path's grid, every sequence's splits
  if constexpr (kGrid != kGridSplits) {  // where the lengths differ: equal ones leave none empty
    const std::vector<int64_t> lens = context_lengths(s);
    if (counter_grid_applies(cluster, lens)) {
      compact_items = work_items(plan, lens);
      out.plan.compact_batch = static_cast<int>(s.b);
      KLAB_CHECK(compact_items * s.hkv * GqaMmaConfig::row_tiles(s) <= INT32_MAX,
                 "decode_attention: the counter path's grid holds more than 2^31 - 1 CTAs");
    }
  }
  int* counters =
      out.ws_lse ? reinterpret_cast<int*>(out.ws_lse + s.rows() * plan.max_splits) : nullptr;
  KvScales scales;
  if constexpr (kElem == 1) scales = {b.ptr<const float>("k_scale"), b.ptr<const float>("v_scale")};
  Launch launch{pool_map(b.ptr<const void>("k_cache"), s, kElem),
                pool_map(b.ptr<const void>("v_cache"), s, kElem),
                b.ptr<const __nv_bfloat16>("q"),
                b.ptr<const int32_t>("seq_lens"),
                b.ptr<const int32_t>("block_table"),
                out,
                counters,
                gqa_geometry(s),
                scales,
                s.b,
                s.d,
                cluster,
                false,
                false,
                global_maps,
                compact_items};
  if constexpr (kGrid == kGridWorkList)
    if (compact_items > 0) {  // upload writes the list there
      KLAB_CHECK(work_list_fits(plan, s.b), "decode_attention: a work item past 16-bit fields");
      const WorkListLayout at = work_list_layout(
          sizeof(float) * static_cast<size_t>(plan.workspace_floats(s.rows(), s.d)), compact_items);
      KLAB_CHECK(b.workspace != nullptr && b.workspace_bytes >= at.end(),
                 "decode_attention: the workspace has no room for the work list");
      launch.work_list_at =
          reinterpret_cast<uint32_t*>(static_cast<unsigned char*>(b.workspace) + at.offset);
    }
  return launch;
}

/// What the kernel needs of a problem beyond the head dimension (rung: the name in reasons);
/// elem = 1 (e4m3 KV): rows of whole 128-byte swizzle blocks, D = 128 or 256.
inline Status tma_pages_limits(const std::string& rung, const Dims& s, int64_t elem = 2) {
  if (elem == 1 && s.d % 128 != 0)
    return Status::no("decode_attention." + rung +
                      ": d must be 128 or 256 (e4m3 rows of whole 128-byte swizzle blocks)");
  if (Status st = tma_page_limits(rung, s); !st.ok()) return st;
  if (s.b > 65535) return Status::no("decode_attention." + rung + ": b above 65535 (grid z)");
  if (s.hkv * GqaMmaConfig::row_tiles(s) > 65535)
    return Status::no("decode_attention." + rung + ": hkv x row tiles above 65535 (grid y)");
  return Status::yes();
}

/// cluster_merge_variant_on's launch of rung r: the swapped stage; one CTA an SM is the variant's
/// setting, not the launch type's (so that v24's launch shares v13's kernels).
constexpr TmaRung cluster_launch_rung(TmaRung r) {
  r.swap_ab = true;
  r.one_cta_an_sm = false;
  return r;
}

/// v11 (elem = 2, bf16) and v12 (elem = 1, e4m3): the swapped-operand kernel on plan_v11,
/// merged in a cluster where the plan says so (cluster_merge_pays), through counters elsewhere
/// (kR.swap_ab is implied). kR's fields, each a rung's change:
/// - push (v13, and v14 on e4m3): on plan_v13, the cluster merge by push
///   (cluster_push_merge.cuh);
/// - stage_group (v15 on e4m3: 2, v19: 3): that many stages at once a math warp;
/// - global_maps (v16, with push): the clustered kernel's tensor maps in the workspace;
/// - counter_ring (v17, with push): the counter path's kernel on that many stages, its plan on
///   the CTAs an SM they leave room for;
/// - grid (v22: kGridCompact, v28: kGridWorkList): the counter path's grid on a ragged batch
///   (CounterGrid);
/// - early_issue (v23): the clustered kernel's first stages issued before the CTA's barrier;
/// - one_cta_an_sm (v24): the clustered launch at one CTA an SM where its clusters all fit so
///   (TmaPagesLaunch::cluster_smem_floor);
/// - steal (v25, v26): the clustered kernel's CTAs share their sequence's stages through a
///   counter;
/// - counter (CounterPath bits): kCounterSteal (v31), the counter path's CTAs share their
///   sequence's stages through a global ticket counter a row group (its `groups` ints past the
///   plan's workspace); kCounterCompactTail (v32), the counter path's compact tail;
///   kCounterDependentMerge (v36, with it), the splits merged by a kernel launched
///   programmatically;
/// - table_window (v38, v39): both kernels' producers take their page indices from windows of 32
///   table columns (TableWindow).
/// cluster_merge_variant's rung on another plan: plan(p) gives the ClusterSplitPlan (v20, v21:
/// plan_v20).
template <TmaRung kR, class PlanOf>
Variant cluster_merge_variant_on(const std::string& rung, std::string summary, PlanOf plan) {
  constexpr int kElem = kR.elem, kGrid = kR.grid, kCounter = kR.counter;
  constexpr bool kGlobalMaps = kR.global_maps;
  Variant v = split_kv_variant(
      rung, std::move(summary),
      [plan](const Problem& p, Buffers& b) {
        auto launch = tma_pages_launch<cluster_launch_rung(kR)>(p, b, plan(p));
        if constexpr (kR.one_cta_an_sm) launch.cluster_smem_floor = one_cta_an_sm_smem();
        return launch;
      },
      plan,
      [rung](const Problem& p) {
        return tma_pages_limits(rung.substr(0, rung.find('_')), dims_of(p), kR.elem);
      },
      /*min_sm*/ 90, kElem == 1 ? DType::e4m3 : DType::bf16);
  if constexpr (kGlobalMaps)
    v.workspace_bytes = [plan_bytes = v.workspace_bytes](const Problem& p) {
      return global_maps_offset(plan_bytes(p)) + kGlobalMapsBytes;
    };
  static_assert(
      (kCounter & kCounterSteal) == 0 || (kGrid == kGridSplits && !kGlobalMaps),
      "v31's tickets follow the arrival counters on the (split, row group, sequence) grid");
  if constexpr ((kCounter & kCounterSteal) != 0)  // the tickets after the arrival counters
    v.workspace_bytes = [plan, plan_bytes = v.workspace_bytes](const Problem& p) {
      const ClusterSplitPlan pl = plan(p);
      const size_t bytes = plan_bytes(p);
      return pl.cluster || pl.max_splits <= 1
                 ? bytes
                 : bytes + sizeof(int) * static_cast<size_t>(pl.groups);
    };
  if constexpr (kGrid == kGridWorkList)  // the items past the plan's workspace (a ragged batch's)
    v.workspace_bytes = [plan, plan_bytes = v.workspace_bytes](const Problem& p) {
      const size_t bytes = plan_bytes(p);
      const std::vector<int64_t> lens = context_lengths(dims_of(p));
      const ClusterSplitPlan pl = plan(p);
      if (!counter_grid_applies(pl.cluster, lens)) return bytes;
      return work_list_layout(bytes, work_items(pl, lens)).end();
    };
  if constexpr (TmaPagesLaunch<cluster_launch_rung(kR), true>::kTraceable && kGrid == kGridSplits)
    add_trace_hooks(v.info.id, {tma_pages_phases(), [plan](const Problem& p) {
                                  const Dims s = dims_of(p);
                                  return plan(p).max_splits * s.hkv * GqaMmaConfig::row_tiles(s) *
                                         s.b;
                                }});
  return v;
}

/// The rungs on their own plan: plan_v13 with push (its ring's CTAs where counter_ring > 0),
/// else plan_v11.
template <TmaRung kR>
Variant cluster_merge_variant(const std::string& rung, std::string summary) {
  static_assert(kR.counter_ring == 0 || kR.push, "v17's ring on v13's plan");
  return cluster_merge_variant_on<kR>(rung, std::move(summary), [](const Problem& p) {
    if constexpr (kR.push)
      return plan_v13(dims_of(p), device_info().sm_count, kR.elem, kR.counter_ring);
    else
      return plan_v11(dims_of(p), device_info().sm_count, kR.elem);
  });
}

}  // namespace klab::decode_attention

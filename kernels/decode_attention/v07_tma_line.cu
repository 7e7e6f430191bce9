// v07 tma_line: v06's CTA on v04's balanced line. The batch's work is v04's line of 64-key tiles
// ordered (sequence, row group, key tile); each of one resident wave of CTAs takes an equal
// contiguous range of it (to one tile), found by v04's block scan of seq_lens. In a CTA, v06's
// producer warp walks the range: each tile's pages as 128-byte swizzled TMA boxes into the
// mbarrier ring, the next tile's table entries (one a lane) loaded before it waits for a slot;
// the ring runs on across row groups and sequences. The four math warps walk the same range on
// gqa_mma.cuh's stage; at a row group's end they sum their outputs in their own buffer and write
// o and lse, or the segment's partial for the last CTA to arrive to merge (tile_line.cuh's
// end_segment, shared with v04, on a barrier of the math warps alone), then load the next row
// group's Q while the producer keeps the ring full.
// Changes from v06: the work is cut in equal ranges of tiles instead of chunks of one row group,
// so every SM streams the same bytes whatever the lengths, and a CTA's start (the scan, the
// first table entries, the first stages) and its ring fill happen once per range, not per
// chunk. At (16, 8k) v06's 256 chunks of 4096 keys left 8 of the 132 SMs with one CTA (86% of
// the ceiling, where 2 MiB a CTA at the SM's ~34 GB/s takes ~123 us of the 138); the ragged
// batch's chunks differ by up to 2x. Changes from v04: the copies by TMA (v06's gain at every
// batched shape: 7-8 points of the ceiling over v03), so no thread issues copies or waits on a
// table load before its math.
// Expected bottleneck: DRAM reads of K and V; the segment ends (four barriers of the math warps,
// a Q load) hide behind the ring's two stages in flight.
// Prediction (written before it ran), Qwen3-8B heads, D = 128, pages 16 and 64, fraction of the
// read ceiling: (16, 8k) 0.91-0.95 (v06 0.85-0.86); (64, 4k) and (256, 2k) 0.92-0.96 (v06
// 0.91-0.94); the ragged batch 0.88-0.94 (v06 0.80-0.83); B = 1 within 3% of v06 (the same one
// wave of equal ranges, the same merge by the last CTA).
// Measured (2026-12-02_307aad9_decode_v07_line): refuted. 74-83% of the ceiling at the uniform
// batched shapes against v06's 85-94% in the same call, 58% on the ragged batch; the bound of
// two CTAs an SM holds it to 168 registers and the math warps' loop spills (506 MB of local
// traffic at (64, 4k)); unbounded it takes 248 (one CTA an SM). Kept as the record.
// Requirements: v06's (D = 64, 128 or 256; pages a power of two from 8 tokens; the pool's rows
// within i32) and v04's (row groups and the line's indices within its bounds); the workspace of
// TileLinePlan::workspace_floats (zeroed when allocated; the counters are left at zero).
#include <cuda_bf16.h>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tile_line.cuh"
#include "kernels/decode_attention/tile_line_launch.cuh"
#include "kernels/decode_attention/tma_pages.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

using Cfg = TmaLineConfig;
using Gqa = GqaMmaConfig;
constexpr int kBlockN = Gqa::kBlockN, kRows = Gqa::kRows, kThreads = Cfg::kThreads;
constexpr int kConsumerWarps = Gqa::kWarps, kProducerWarp = kConsumerWarps;
static_assert(TileLinePlan::kSlotRows == kRows);
static_assert(kThreads == (kConsumerWarps + 1) * 32);

// Grid: plan.ctas CTAs; kThreads threads: four math warps, then the producer warp. Dynamic
// shared memory (its base rounded up to 1024 bytes): kStages x (K tile, V tile) of kBlockN x kD
// bf16 swizzled, Q's kRows x kD bf16 tile, the warps' summed outputs (kRows x red_stride fp32).
template <int kD>
__global__ void __launch_bounds__(kThreads, kD <= 128 ? 2 : 1)
    tma_line_kernel(const __grid_constant__ CUtensorMap k_map,
                    const __grid_constant__ CUtensorMap v_map, const __nv_bfloat16* __restrict__ q,
                    const int32_t* __restrict__ seq_lens, const int32_t* __restrict__ block_table,
                    LineOut out, GqaGeometry g) {
  constexpr int kStages = Gqa::stages(kD);
  constexpr uint32_t kTileBytes = StageCopy<kD>::kTileBytes;
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  __shared__ float s_max[kConsumerWarps][kRows], s_sum[kConsumerWarps][kRows];
  __shared__ int64_t s_scan[kThreads / 32], s_found[2];
  __shared__ int s_last;
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + TmaPagesConfig::kAlign - 1) /
      TmaPagesConfig::kAlign * TmaPagesConfig::kAlign);
  unsigned char* s_q = smem + kStages * 2 * kTileBytes;
  float* s_red = reinterpret_cast<float*>(s_q + kRows * kD * 2);
  const uint32_t sq = device::smem_addr(s_q);

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int groups = g.hkv * g.row_tiles;
  const int64_t batch = out.batch;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      device::mbarrier_init(&full[s], 1);
      device::mbarrier_init(&empty[s], kConsumerWarps);
    }
    device::fence_mbarrier_init();
  }
  LineRange range;  // its barriers also publish the mbarriers
  if (!find_line_range<kThreads>(seq_lens, out, groups, s_scan, s_found, range)) return;
  const TileLinePlan plan = range.plan;
  const int64_t work = range.work, n = range.n;

  if (warp == kProducerWarp) {
    // The producer: tile i + 1's table entries are loaded (one a lane) before the wait for tile
    // i's slot, so a table load is never on a refill's path. No barrier of the whole CTA
    // follows: the warp leaves once its last tile is issued.
    if (lane == 0) {
      device::prefetch_tensor_map(&k_map);
      device::prefetch_tensor_map(&v_map);
    }
    LineCursor at = range.at;
    auto stage_of = [&](const LineCursor& a) {
      const int64_t k0 = a.k * kBlockN;
      return StagePages{k0, min(a.len, k0 + kBlockN)};
    };
    int next = stage_of(at).entry(block_table + at.bi * g.max_pages, lane, g);
    for (int64_t i = 0; i < n; ++i) {
      const int pool_page = next, hk = at.hk(g);
      const StagePages stage = stage_of(at);
      if (i + 1 < n) {
        at.next(seq_lens, groups, plan, batch);
        next = stage_of(at).entry(block_table + at.bi * g.max_pages, lane, g);
      }
      const int slot = static_cast<int>(i % kStages);
      if (i >= kStages)
        device::mbarrier_wait(&empty[slot], static_cast<uint32_t>((i / kStages) - 1) & 1);
      stage.template issue<kD>(&k_map, &v_map, smem + slot * 2 * kTileBytes, &full[slot], pool_page,
                               hk, lane, g);
    }
    return;
  }

  // The math warps, on their own barrier (1) from here on.
  const NamedSync<Gqa::kThreads> sync{1};
  LineCursor use_at = range.at;
  GqaWarpState<kD> state;
  int64_t lim[2];
  auto start_segment = [&]() {  // Q of use_at's row group, published by sync()
    load_q_tile<kD>(sq, q, use_at.bi, use_at.hk(g), use_at.row0(g), g, tid);
    row_limits(lim, lane, use_at.row0(g), use_at.len, use_at.len, g);
    state.reset();
    sync();
  };
  start_segment();
  const uint32_t s_kv = device::smem_addr(smem);
  for (int64_t i = 0; i < n; ++i) {
    const int slot = static_cast<int>(i % kStages);
    device::mbarrier_wait(&full[slot], static_cast<uint32_t>(i / kStages) & 1);
    const uint32_t sk = s_kv + slot * 2 * kTileBytes, sv = sk + kTileBytes;
    const int64_t key_base = use_at.k * kBlockN;
    zero_v_rows_past<kD>(sv, warp, lane, key_base, use_at.len);
    gqa_mma_stage<kD, TmaKvTile<kD>>(state, sq, sk, sv, lane, warp * 16, key_base, lim,
                                     g.scale_log2);
    __syncwarp();
    if (lane == 0) device::mbarrier_arrive(&empty[slot]);
    if (!use_at.last_of_group() && i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      continue;
    }
    end_segment<kD, 8>(state, use_at, out, plan, work, g, s_max, s_sum, s_red, &s_last, sync);
    if (i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      start_segment();
    }
  }
}

/// v07's arguments, resolved once (prepare): the tensor maps over the pools, the line's output.
struct TmaLineLaunch {
  CUtensorMap k_map, v_map;
  const __nv_bfloat16* q;
  const int32_t *seq_lens, *block_table;
  LineOut out;
  GqaGeometry g;
  int64_t d;

  template <int kD>
  void enqueue(cudaStream_t stream) const {
    const int smem = static_cast<int>(Cfg::smem_bytes(kD));
    device::opt_in_dynamic_smem<tma_line_kernel<kD>>(smem);
    tma_line_kernel<kD>
        <<<static_cast<unsigned>(out.plan.ctas), kThreads, static_cast<size_t>(smem), stream>>>(
            k_map, v_map, q, seq_lens, block_table, out, g);
    KLAB_CHECK_LAUNCH();
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() { enqueue<kD>(stream); });
  }
};

TileLinePlan v07_plan(const Problem& p) { return plan_v07(dims_of(p), device_info().sm_count); }

TmaLineLaunch tma_line_launch(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return {
      pool_map(b.ptr<const void>("k_cache"), s),
      pool_map(b.ptr<const void>("v_cache"), s),
      b.ptr<const __nv_bfloat16>("q"),
      b.ptr<const int32_t>("seq_lens"),
      b.ptr<const int32_t>("block_table"),
      line_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), b.workspace, v07_plan(p), s.b, s.d),
      gqa_geometry(s),
      s.d};
}

}  // namespace

Variant gpu_v07_tma_line() {
  return split_kv_variant(
      "v07_tma_line",
      "v06's TMA-fed CTA (a producer warp gathering whole pages into an mbarrier ring) on v04's "
      "balanced line of key tiles: one wave, equal ranges, one ring across row groups",
      tma_line_launch, v07_plan,
      [](const Problem& p) {
        const Dims s = dims_of(p);
        if (Status st = tma_page_limits("v07", s); !st.ok()) return st;
        return line_limits("v07", s, v07_plan(p));
      },
      /*min_sm*/ 90);
}

}  // namespace klab::decode_attention

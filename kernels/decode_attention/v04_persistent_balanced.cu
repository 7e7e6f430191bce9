// v04 persistent_balanced: v03's grouped-query tensor-core CTA on a persistent schedule that is
// balanced over ragged lengths, in one launch. The batch's work is one line of 64-key tiles
// ordered (sequence, row group, key tile), a row group being one m16 tile of a KV head's query
// rows (TileLinePlan, split_kv_plan.hpp); each of up to one resident wave of CTAs takes an equal
// contiguous range of it (to one tile), whatever the lengths. A CTA first finds where its range
// starts: its threads sum the tiles of the lengths (a block scan of seq_lens), so the schedule
// reads the lengths on the device and nothing is assumed about their order. It then streams its
// range through one cp.async ring that does not drain between row groups: each thread fetches
// the block-table entries of its rows one tile ahead (registers, no page-index buffer, no limit
// on a chunk's length), and the warps run gqa_mma.cuh's stage (S and P V on mma.sync m16n8k16,
// online softmax in registers) as v03 does. At the end of a row group's segment the four warps'
// outputs are rescaled to the rows' common max and summed in one fp32 buffer (shared with Q's
// tile, which is reloaded for the next segment); a row group inside the range is written to o
// and lse directly, one that spans CTAs c_first .. c_last leaves its normalised fp32 partial and
// lse in the CTA's slot, fences, and counts itself in on counter c_last; the CTA that arrives
// last merges the partials by log-sum-exp in CTA order (the same bits whoever arrives last:
// lse_merge.hpp's weights, every partial's loads in flight together) and resets the counter for
// the next launch. No second kernel.
// Changes from v03: one launch instead of the split kernel and merge_splits_kernel; the merge's
// loads are independent (v03's merge walks a row's splits one dependent L2 load after another,
// D / 32 elements a lane: 128 serial loads at 32 splits, 256 at 64, which fits the ~30 us above
// the KV stream v03 measured at (1, 4k) and (1, 32k) and ~65 us at (1, 128k)); the work is cut in
// key tiles balanced over the CTAs instead of chunks of whole sequences (B = 1, L = 4k: 256 CTAs
// of two tiles; large batches: ranges of hundreds of tiles across row groups); the ring runs on
// across row groups, so a CTA fills its pipeline once, not once a chunk; the block-table loads
// of a tile are issued one tile early instead of before the first copy of each chunk.
// Expected bottleneck: DRAM reads of K and V at the batched shapes and at long single sequences
// (two CTAs an SM at D = 128, each with two 32 KiB stages in flight: 128 KiB an SM, over
// Little's law's ~50 KiB); at B = 1 and short L, the latency chain of one launch: seq_lens, the
// first table entries, the first stages, the segment's epilogue, the partial's fence and atomic,
// the merge's loads (a row group at (1, 4k) spans ~33 CTAs).
// Prediction (written before it ran; measured in docs/worklogs/decode.md), Qwen3-8B heads (32 / 8, D = 128),
// fraction of the read ceiling (4495 GB/s), pages 16 and 64 alike: (1, 4k) 6-9 us (0.42-0.62;
// v03: 34.8 us); (1, 32k) 0.81-0.90 (33-37 us: the fixed ~4-7 us of start and merge weigh 12-20%
// of a 30 us stream); (1, 128k) 0.91-0.95; (16, 8k) 0.90-0.94; (64, 4k) 0.91-0.95; (256, 2k)
// 0.91-0.95 (each CTA crosses ~8 row groups: an epilogue of four barriers and a Q reload each);
// the ragged batch of 64 (100 to 16k) 0.88-0.93.
// Requirements: D = 64, 128 or 256 (v03's stages: 4 x 16, 3 x 32, 2 x 64 KiB; dynamic shared
// memory above 48 KiB opted in); any group size and Qlen (row tiles of 16); any page size (the
// HND pages of family.hpp, rows 16-byte aligned); the workspace of TileLinePlan::workspace_floats
// (2 slots a CTA and a counter a CTA, zeroed when allocated; the counters are left at zero).
#include <cuda_bf16.h>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tile_line.cuh"
#include "kernels/decode_attention/tile_line_launch.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

using Cfg = PersistentGqaConfig;
using Gqa = GqaMmaConfig;
constexpr int kBlockN = Gqa::kBlockN, kRows = Gqa::kRows, kThreads = Gqa::kThreads;
constexpr int kWarps = Gqa::kWarps;
static_assert(TileLinePlan::kSlotRows == kRows);

// Grid: plan.ctas CTAs (CTA c >= the line's length in tiles exits). Dynamic shared memory:
// kStages x (K tile, V tile) of kBlockN x kD bf16, then Q's kRows x kD bf16 tile, whose bytes
// also hold the warps' summed fp32 outputs at a segment's end.
template <int kD>
__global__ void __launch_bounds__(kThreads)
    persistent_gqa_kernel(const __nv_bfloat16* __restrict__ q,
                          const __nv_bfloat16* __restrict__ k_cache,
                          const __nv_bfloat16* __restrict__ v_cache,
                          const int32_t* __restrict__ seq_lens,
                          const int32_t* __restrict__ block_table, LineOut out, GqaGeometry g) {
  constexpr int kStages = Gqa::stages(kD);
  constexpr uint32_t kTileBytes = StageCopy<kD>::kTileBytes;
  constexpr int kPasses = StageCopy<kD>::kPasses;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float s_max[kWarps][kRows], s_sum[kWarps][kRows];
  __shared__ int64_t s_scan[kWarps], s_found[2];
  __shared__ int s_last;
  unsigned char* s_q = smem + kStages * 2 * kTileBytes;
  float* s_red = reinterpret_cast<float*>(s_q);  // (kRows, red_stride) fp32, at a segment's end
  const uint32_t s_kv = device::smem_addr(smem), sq = device::smem_addr(s_q);

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int groups = g.hkv * g.row_tiles;
  const int64_t batch = out.batch;

  LineRange range;
  if (!find_line_range(seq_lens, out, groups, s_scan, s_found, range)) return;  // whole CTA
  const TileLinePlan plan = range.plan;
  const int64_t work = range.work, n = range.n;
  LineCursor load_at = range.at;
  LineCursor use_at = load_at;  // the consumer's tile, kStages - 1 behind the loader's

  // The loader: this thread's rows' block-table entries for the tile at load_at, fetched one
  // tile before its copies are issued.
  int32_t pages[kPasses];
  auto fetch_pages = [&]() {
    const int32_t* table = block_table + load_at.bi * g.max_pages;
#pragma unroll
    for (int k = 0; k < kPasses; ++k) {
      const int64_t j = load_at.k * kBlockN + StageCopy<kD>::row(tid, k);
      pages[k] = j < load_at.len ? __ldg(table + page_of(j, g)) : 0;
    }
  };
  int64_t issued = 0;
  auto issue_next = [&]() {
    if (issued < n) {
      const uint32_t sk = s_kv + static_cast<uint32_t>(issued % kStages) * 2 * kTileBytes;
      const int hk = load_at.hk(g);
      load_kv_stage<kD>(sk, sk + kTileBytes, k_cache, v_cache, tid, [&](int k, int r) -> int64_t {
        const int64_t j = load_at.k * kBlockN + r;
        return j < load_at.len ? kv_row_offset(pages[k], hk, j, g, kD) : -1;
      });
      if (++issued < n) {
        load_at.next(seq_lens, groups, plan, batch);
        fetch_pages();
      }
    }
    device::cp_async_commit();
  };

  GqaWarpState<kD> state;
  int64_t lim[2];
  auto start_segment = [&]() {  // Q of use_at's row group; the caller's barrier publishes it
    load_q_tile<kD>(sq, q, use_at.bi, use_at.hk(g), use_at.row0(g), g, tid);
    row_limits(lim, lane, use_at.row0(g), use_at.len, use_at.len, g);
    state.reset();
  };

  start_segment();
  fetch_pages();
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) issue_next();

  for (int64_t i = 0; i < n; ++i) {
    device::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile i landed for every thread; its slot's previous tile is consumed
    issue_next();

    const uint32_t sk = s_kv + static_cast<uint32_t>(i % kStages) * 2 * kTileBytes;
    gqa_mma_stage<kD>(state, sq, sk, sk + kTileBytes, lane, warp * 16, use_at.k * kBlockN, lim,
                      g.scale_log2);
    if (!use_at.last_of_group() && i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      continue;
    }

    end_segment<kD, 8>(state, use_at, out, plan, work, g, s_max, s_sum, s_red, &s_last, CtaSync{});
    if (i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      start_segment();  // published by the next iteration's first barrier
    }
  }
  device::cp_async_wait<0>();
}

/// v04's kernel and its shared-memory budget: the rest of the launch is tile_line_launch.cuh's.
struct PersistentRung {
  using Cfg = PersistentGqaConfig;
  template <int kD>
  static constexpr auto kernel = persistent_gqa_kernel<kD>;
};

TileLinePlan v04_plan(const Problem& p) { return plan_v04(dims_of(p), device_info().sm_count); }

TileLineLaunch<PersistentRung> persistent_launch(const Problem& p, Buffers& b) {
  return tile_line_launch<PersistentRung>(p, b, v04_plan(p));
}

}  // namespace

Variant gpu_v04_persistent_balanced() {
  return split_kv_variant(
      "v04_persistent_balanced",
      "one launch: v03's tensor-core CTA over equal ranges of the batch's key tiles (a persistent "
      "wave, one ring across row groups), split row groups merged by the last CTA to arrive",
      persistent_launch, v04_plan,
      [](const Problem& p) { return line_limits("v04", dims_of(p), v04_plan(p)); });
}

}  // namespace klab::decode_attention

// v05 staged_page_indices: v04's persistent, balanced line of key tiles, with the ring's page
// indices staged in shared memory ahead of the K/V copies that need them. v04's threads fetched
// their rows' block-table entries into registers one tile before issuing that tile's copies, so
// every stage's cp.async waited on a global load issued one iteration earlier: the ring issued at
// most one stage per round trip of that load, whatever its depth (docs/worklogs/decode.md: v04
// streams ~3 TB/s at every shape, B = 1 and batched alike, against v03's ~4). Here the entries of
// tile t (at most 64 pages: P = 1) land by cp.async in slot t % 8 of a shared ring, in the commit
// group of tile t - 2's K/V at D = 128 (kStages - 1 tiles ahead: PageIndexRing, split_kv_plan.hpp);
// the copies of tile t, issued after that group's wait and barrier, read them from shared memory.
// The same
// idea removes the other loads v04 waited on inside its loop: the next segment's Q tile is
// fetched by cp.async with the ring (into a second Q tile, when the segment before it is the one
// in use) instead of a load-and-store at the segment's switch, and the warps' outputs are summed
// at a segment's end through the stage its last tile just freed (4 warps x 16 rows x D fp32 is
// one stage's bytes) in one pass after one barrier, instead of four passes through Q's bytes.
// The prologue is three dependent round trips (seq_lens for the line's scan; Q and the first two
// tiles' indices together; the first stages), v04's five; the merge of a split row group (the
// last CTA to arrive, v04's protocol) keeps sixteen partials' loads in flight a thread.
// Changes from v04: page indices in a shared ring two tiles ahead (not registers one tile ahead);
// Q by cp.async ahead of its segment; the warps' sum through the freed stage, one barrier.
// Expected bottleneck: DRAM reads of K and V at every headline shape but (1, 4k) (two CTAs an SM
// at D = 128, each with two 32 KiB stages in flight: 128 KiB an SM against Little's law's
// ~34-50 KiB at 4.5 TB/s and 1-1.5 us); at (1, 4k) the launch and the chain of one launch.
// Prediction (written before it runs; measured in docs/worklogs/decode.md), fraction of the read
// ceiling, Qwen3-8B heads, pages 16 and 64 alike: (1, 32k) 0.80-0.88, (1, 128k) 0.88-0.93,
// (16, 8k) 0.88-0.93, (64, 4k) and (256, 2k) 0.90-0.94, ragged 64 0.86-0.92, (1, 4k) 11-15 us.
// Requirements: D = 64, 128 or 256 (v03's stages; dynamic shared memory above 48 KiB opted in);
// any group size and Qlen (row tiles of 16); any page size (a 64-key tile spans at most 64 pages);
// the workspace of TileLinePlan::workspace_floats (v04's: 2 slots and a counter a CTA, zeroed
// when allocated, the counters left at zero).
#include <cuda_bf16.h>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tile_line.cuh"
#include "kernels/decode_attention/tile_line_launch.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

using Cfg = StagedPageConfig;
using Gqa = GqaMmaConfig;
using Ring = PageIndexRing;
constexpr int kBlockN = Gqa::kBlockN, kRows = Gqa::kRows, kThreads = Gqa::kThreads;
constexpr int kWarps = Gqa::kWarps;
static_assert(TileLinePlan::kSlotRows == kRows);
static_assert(Ring::kEntries >= kBlockN, "a tile of kBlockN keys spans up to kBlockN pages");
static_assert(Ring::kEntries <= kThreads, "one thread a page index");
static_assert((Ring::kSlots & (Ring::kSlots - 1)) == 0);

/// What a K/V copy needs of its tile, written with the tile's page indices (thread 0, plain
/// shared stores published by the barriers between the fetch and the copies).
struct TileMeta {
  int32_t key0;   ///< the tile's first key in its sequence
  int32_t len;    ///< the sequence's length
  int32_t hk;     ///< the row group's KV head
  int32_t page0;  ///< the block-table column of slot entry 0
};
static_assert(sizeof(TileMeta) == Cfg::kTileMetaBytes);

/// Q's kRows rows of KV head hk from row0 into the tile at sq by cp.async (zero-filled past the
/// group's rows): lands with the commit group it joins.
template <int kD>
__device__ __forceinline__ void load_q_tile_async(uint32_t sq, const __nv_bfloat16* __restrict__ q,
                                                  int64_t bi, int hk, int row0,
                                                  const GqaGeometry& g, int tid) {
  constexpr int kChunks = kD / 8;
#pragma unroll
  for (int c = tid; c < kRows * kChunks; c += kThreads) {
    const int r = c / kChunks, ch = c % kChunks;
    const bool valid = row0 + r < g.rows_per_head;
    const __nv_bfloat16* src = valid ? q + global_row(bi, hk, row0 + r, g) * kD + ch * 8 : q;
    device::cp_async_16(sq + tile_offset<kD>(r, ch), src, valid);
  }
}

/// Float offset of 8-byte unit u (columns 2u, 2u + 1) of row r of warp w's (kRows, kD) fp32
/// output in the freed stage: units XORed in groups of four by r % 4, so a warp's stores (rows
/// gr and gr + 8, four units a row) and a row's reads (consecutive units) are two wavefronts.
template <int kD>
__device__ __forceinline__ int red_offset(int w, int r, int u) {
  return ((w * kRows + r) * (kD / 2) + (u ^ ((r & 3) << 2))) * 2;
}

// Grid: plan.ctas CTAs (CTA c >= the line's length in tiles exits). Dynamic shared memory:
// kStages x (K tile, V tile) of kBlockN x kD bf16, two Q tiles of kRows x kD bf16, the ring of
// page indices (Ring::kSlots x Ring::kEntries i32) and its slots' TileMeta.
template <int kD>
__global__ void __launch_bounds__(kThreads)
    staged_page_kernel(const __nv_bfloat16* __restrict__ q,
                       const __nv_bfloat16* __restrict__ k_cache,
                       const __nv_bfloat16* __restrict__ v_cache,
                       const int32_t* __restrict__ seq_lens,
                       const int32_t* __restrict__ block_table, LineOut out, GqaGeometry g) {
  constexpr int kStages = Gqa::stages(kD);
  constexpr int kLead = Ring::lead(kStages);
  static_assert(Ring::kSlots >= kLead + kStages - 1, "no slot fetched again while it is read");
  constexpr uint32_t kTileBytes = StageCopy<kD>::kTileBytes;
  constexpr uint32_t kQBytes = static_cast<uint32_t>(Cfg::q_tile_bytes(kD));
  static_assert(Cfg::reduction_bytes(kD) <= 2 * kTileBytes, "the warps' sum fits in a stage");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float s_max[kWarps][kRows], s_sum[kWarps][kRows];
  __shared__ int64_t s_scan[kWarps], s_found[2];
  __shared__ int s_last;
  const uint32_t s_kv = device::smem_addr(smem);
  const uint32_t sq0 = s_kv + kStages * 2 * kTileBytes;  // Q tiles 0 and 1
  int32_t* s_pages = reinterpret_cast<int32_t*>(smem + kStages * 2 * kTileBytes + 2 * kQBytes);
  TileMeta* s_meta = reinterpret_cast<TileMeta*>(s_pages + Ring::kSlots * Ring::kEntries);

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int groups = g.hkv * g.row_tiles;
  const int64_t batch = out.batch;

  LineRange range;  // v04's scan of seq_lens: this CTA's tiles and where they start
  if (!find_line_range(seq_lens, out, groups, s_scan, s_found, range)) return;  // whole CTA
  const TileLinePlan plan = range.plan;
  const int64_t work = range.work, n = range.n;
  const int c = static_cast<int>(blockIdx.x);
  LineCursor use_at = range.at;  // the tile the warps work on
  LineCursor tab_at = use_at;    // the tile whose page indices are fetched next

  // Segments (row groups' pieces in this range) are counted from 0 in range order; segment s's Q
  // lives in Q tile s % 2. The next segment's Q is fetched with the page indices of its first
  // tile when the warps are in the segment before it (the other Q tile is then free); otherwise
  // (segments shorter than the ring's reach) at the switch itself.
  int use_seg = 0, tab_seg = 0, q_fetched = 0;
  int64_t tab_issued = 0, kv_issued = 0;

  // Tile tab_issued's page indices and TileMeta into its ring slot (and the Q of the segment it
  // opens, when fetched ahead), in the group being built.
  auto fetch_indices = [&]() {
    if (tab_issued >= n) return;
    const int sl = Ring::slot(tab_issued);
    const int ent = Ring::entries(tab_at.k, kBlockN, g.page, tab_at.len);
    const int64_t p0 = Ring::first_page(tab_at.k, kBlockN, g.page);
    if (tid < ent)
      device::cp_async_4(device::smem_addr(s_pages + sl * Ring::kEntries + tid),
                         block_table + tab_at.bi * g.max_pages + p0 + tid, true);
    if (tid == 0)
      s_meta[sl] = {static_cast<int32_t>(tab_at.k * kBlockN), static_cast<int32_t>(tab_at.len),
                    tab_at.hk(g), static_cast<int32_t>(p0)};
    if (tab_seg == use_seg + 1 && tab_at.k == 0 && q_fetched < tab_seg) {
      load_q_tile_async<kD>(sq0 + (tab_seg & 1) * kQBytes, q, tab_at.bi, tab_at.hk(g),
                            tab_at.row0(g), g, tid);
      q_fetched = tab_seg;
    }
    if (++tab_issued < n && tab_at.next(seq_lens, groups, plan, batch)) ++tab_seg;
  };
  // Tile kv_issued's K and V rows into its stage, the pool pages from its ring slot.
  auto issue_kv = [&]() {
    if (kv_issued >= n) return;
    const int sl = Ring::slot(kv_issued);
    const TileMeta m = s_meta[sl];
    const int32_t* pages = s_pages + sl * Ring::kEntries;
    const uint32_t sk = s_kv + static_cast<uint32_t>(kv_issued % kStages) * 2 * kTileBytes;
    load_kv_stage<kD>(sk, sk + kTileBytes, k_cache, v_cache, tid, [&](int, int r) -> int64_t {
      const int64_t j = int64_t(m.key0) + r;
      if (j >= m.len) return -1;
      return kv_row_offset(pages[page_of(j, g) - m.page0], m.hk, j, g, kD);
    });
    ++kv_issued;
  };

  // Prologue: Q of segment 0 and the first kLead tiles' indices in one group, waited for; then
  // the first kStages - 1 tiles' copies, each group carrying the indices of the tile kLead on.
  load_q_tile_async<kD>(sq0, q, use_at.bi, use_at.hk(g), use_at.row0(g), g, tid);
#pragma unroll
  for (int t = 0; t < kLead; ++t) fetch_indices();
  device::cp_async_commit();
  device::cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    issue_kv();
    fetch_indices();
    device::cp_async_commit();
  }

  GqaWarpState<kD> state;
  int64_t lim[2];
  row_limits(lim, lane, use_at.row0(g), use_at.len, use_at.len, g);
  state.reset();

  const int gr = lane / 4, tq = lane % 4;
  for (int64_t i = 0; i < n; ++i) {
    device::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile i and tile i + kLead's indices landed for every thread
    issue_kv();       // tile i + kStages - 1, its pages from the ring
    fetch_indices();  // tile i + kStages - 1 + kLead
    device::cp_async_commit();

    const uint32_t sk = s_kv + static_cast<uint32_t>(i % kStages) * 2 * kTileBytes;
    const uint32_t sq = sq0 + (use_seg & 1) * kQBytes;
    gqa_mma_stage<kD>(state, sq, sk, sk + kTileBytes, lane, warp * 16, use_at.k * kBlockN, lim,
                      g.scale_log2);
    if (!use_at.last_of_group() && i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      continue;
    }

    // The segment ends. Every warp past its last read of the stage (the barrier after the
    // stats), the warps' raw outputs go to the stage tile i used, which no copy targets before
    // the next iteration's barrier; one barrier later each row is combined across the warps.
    store_warp_row_stats(state, lane, s_max[warp], s_sum[warp]);
    __syncthreads();
    float* red = reinterpret_cast<float*>(smem + (i % kStages) * 2 * kTileBytes);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int nt = 0; nt < kD / 8; ++nt)
        *reinterpret_cast<float2*>(red + red_offset<kD>(warp, gr + 8 * h, 4 * nt + tq)) =
            make_float2(state.acc[nt][2 * h], state.acc[nt][2 * h + 1]);
    __syncthreads();

    // o = O / sum and lse = (max + log2 sum) ln 2, to o and lse or to this CTA's slot.
    const int64_t gb = use_at.group_begin();
    const int c_first = plan.cta_of(gb, work), c_last = plan.cta_of(gb + use_at.tiles - 1, work);
    const bool whole = c_first == c_last;
    const int64_t slot = plan.slot(c, gb, work);
    const int hk = use_at.hk(g), row0 = use_at.row0(g);
    for (int e = tid; e < kRows * (kD / 2); e += kThreads) {
      const int r = e / (kD / 2), u = e % (kD / 2);
      if (row0 + r >= g.rows_per_head) break;  // rows are in order: the rest are padding
      float mx = -INFINITY;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_max[w][r]);
      float sum = 0.f, x0 = 0.f, x1 = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float ws = s_sum[w][r];
        if (ws > 0.f) {
          const float f = exp2f(s_max[w][r] - mx);
          const float2 v = *reinterpret_cast<const float2*>(red + red_offset<kD>(w, r, u));
          sum += ws * f;
          x0 += v.x * f;
          x1 += v.y * f;
        }
      }
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const float l = sum > 0.f ? (mx + log2f(sum)) * 0.69314718055994531f : -INFINITY;
      if (whole) {
        const int64_t row = global_row(use_at.bi, hk, row0 + r, g);
        *reinterpret_cast<uint32_t*>(out.o + row * kD + 2 * u) =
            device::pack2<__nv_bfloat16>(x0 * inv, x1 * inv);
        if (u == 0) out.lse[row] = l;
      } else {
        *reinterpret_cast<float2*>(out.ws_o + (slot * kRows + r) * kD + 2 * u) =
            make_float2(x0 * inv, x1 * inv);
        if (u == 0) out.ws_lse[slot * kRows + r] = l;
      }
    }
    if (!whole)  // the arrival and, in the last CTA to arrive, the merge
      arrive_and_merge<kD, 16>(out, plan, work, gb, c_first, c_last, use_at.bi, hk, row0, g,
                               &s_last, s_max[0], s_sum[0], CtaSync{});
    __syncthreads();  // the stage, the stats and s_last are free again
    if (i + 1 < n) {
      use_at.next(seq_lens, groups, plan, batch);
      ++use_seg;
      // Not fetched ahead (a short segment before it): Q now, into its tile, which
      // no copy in flight targets; the next iteration's barrier publishes it.
      if (q_fetched != use_seg)
        load_q_tile<kD>(sq0 + (use_seg & 1) * kQBytes, q, use_at.bi, use_at.hk(g), use_at.row0(g),
                        g, tid);
      row_limits(lim, lane, use_at.row0(g), use_at.len, use_at.len, g);
      state.reset();
    }
  }
  device::cp_async_wait<0>();
}

/// v05's kernel and its shared-memory budget: the rest of the launch is tile_line_launch.cuh's.
struct StagedRung {
  using Cfg = StagedPageConfig;
  template <int kD>
  static constexpr auto kernel = staged_page_kernel<kD>;
};

TileLinePlan v05_plan(const Problem& p) { return plan_v05(dims_of(p), device_info().sm_count); }

TileLineLaunch<StagedRung> staged_launch(const Problem& p, Buffers& b) {
  return tile_line_launch<StagedRung>(p, b, v05_plan(p));
}

}  // namespace

Variant gpu_v05_staged_page_indices() {
  return split_kv_variant(
      "v05_staged_page_indices",
      "v04's persistent balanced line with the ring's page indices (and the next segment's Q) "
      "fetched by cp.async into shared memory two tiles ahead of the K/V copies that use them",
      staged_launch, v05_plan, [](const Problem& p) {
        const Dims s = dims_of(p);
        // TileMeta holds keys and lengths as i32 (seq_lens is i32).
        if (s.len > INT32_MAX - kBlockN)
          return Status::no("decode_attention.v05: len above 2^31 - 64");
        return line_limits("v05", s, v05_plan(p));
      });
}

}  // namespace klab::decode_attention

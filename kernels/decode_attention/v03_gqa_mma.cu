// v03 gqa_mma: grouped-query sharing on tensor cores. A CTA holds the query rows of one KV head
// (its Hq / Hkv query heads times the Qlen new tokens, padded to one m16 tile; groups x Qlen
// above 16 take several tiles, each its own CTA) and streams one chunk of the sequence's keys
// (v02's split plan, rung_plans.hpp: plan_v03) through a cp.async pipeline: the chunk's page
// indices are staged in shared memory first, then each stage gathers 64 keys' K and V rows
// (16-byte copies into XOR-swizzled rows, zero-filled past the chunk) while the four warps work
// on an earlier stage. Each warp takes 16 of the stage's keys: S = Q K^T on mma.sync m16n8k16
// (Q and K through ldmatrix), the causal and length masks, an online softmax per row in
// registers (exp2, scores scaled by scale * log2 e), P rounded to bf16 straight from the score
// accumulators into the A fragment of P V (V through ldmatrix.trans), fp32 accumulation. The
// warps' partial (max, sum, O) merge through shared memory at the end; the CTA writes o and lse,
// or its split's partial for the merge kernel (split_kv.cuh) as v02 does. A row without keys
// writes O = 0 and lse = -inf.
// Changes from v02: the group's query heads share each K/V load (v02 read every K/V row once per
// query head, Hq / Hkv = 4 times for Qwen3-8B, from L2 when the heads ran together); the keys
// move in 64-key stages with 2-3 stages in flight a CTA instead of one key a warp; scores and
// P V run on tensor cores; page indices come from shared memory.
// Expected bottleneck: DRAM reads of K and V. At D = 128 a CTA keeps up to two 32 KiB stages in
// flight (three stages, 98 KiB of ring) and two CTAs fit an SM: ~128 KiB in flight an SM, well
// above Little's law's ~50 KiB at ~4.4 TB/s and ~1.5 us. The gathers are whole 256-byte rows
// (P >= 1 keeps every K/V row contiguous), so page size changes only the index arithmetic.
// Costs beyond the KV bytes: the merge's partials at B = 1 (~1.5% of the bytes at (1, 32k)),
// the pipeline's fill per CTA (a chunk is 2-32 stages), the tail of a wave (the plan targets one
// full wave at B = 1 and several at large batches).
// Prediction (written before it ran), fraction of the KV read ceiling (~4.0-4.4 TB/s), Qwen3-8B
// heads (32 / 8, D = 128), pages 16 and 64 alike: (1, 32k) 0.80-0.90, (16, 8k) 0.85-0.92,
// (64, 4k) 0.85-0.92, (256, 2k) 0.80-0.90 (2048 CTAs of one 2k chunk: the pipeline fill and the
// per-CTA tail weigh more); at or just below cuDNN's paged SDPA at the large shapes (3.8-4.4
// TB/s), above it at (1, 4k) (cuDNN 0.95 TB/s; here 256 CTAs of two stages each, launch- and
// latency-bound: 0.4-0.6 of the ceiling, ~6-9 us for its 16.8 MB).
// Requirements: D = 64, 128 or 256 (the stages: 4 x 16, 3 x 32, 2 x 64 KiB; dynamic shared
// memory above 48 KiB opted in); any group size and Qlen (row tiles of 16); b and Hkv x row tiles
// at most 65535 (grid z and y); the HND page layout of family.hpp with 16-byte aligned rows
// (D x 2 bytes, a multiple of 16); the workspace of SplitKvPlan::workspace_floats.
// The stage gather and the warps' work on a stage are gqa_mma.cuh's, shared with v04.
#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

using Cfg = GqaMmaConfig;
constexpr int kBlockN = Cfg::kBlockN, kRows = Cfg::kRows, kThreads = Cfg::kThreads;

// Block (split, hk * row_tiles + row tile, bi). Dynamic shared memory: kStages x (K tile, V
// tile) of kBlockN x kD bf16, Q's kRows x kD bf16 tile, the chunk's page indices.
template <int kD>
__global__ void __launch_bounds__(kThreads)
    gqa_mma_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                   const __nv_bfloat16* __restrict__ v_cache, const int32_t* __restrict__ seq_lens,
                   const int32_t* __restrict__ block_table, SplitOut out, GqaGeometry g) {
  constexpr int kStages = Cfg::stages(kD);
  constexpr uint32_t kTileBytes = StageCopy<kD>::kTileBytes;  // K or V of one stage
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float s_max[Cfg::kWarps][kRows], s_sum[Cfg::kWarps][kRows];
  unsigned char* s_q = smem + kStages * 2 * kTileBytes;
  int32_t* s_pages = reinterpret_cast<int32_t*>(s_q + kRows * kD * 2);

  const int split = static_cast<int>(blockIdx.x);
  const int hk = static_cast<int>(blockIdx.y) / g.row_tiles;
  const int row0 = (static_cast<int>(blockIdx.y) % g.row_tiles) * kRows;  // first row of the tile
  const int64_t bi = blockIdx.z;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t len = seq_lens[bi];
  const int splits = out.plan.splits_of(len);
  if (split >= splits) return;  // the grid is sized for the longest sequence
  const int64_t j0 = out.plan.key_begin(split), j1 = out.plan.key_end(split, len);
  const int tiles = j1 > j0 ? static_cast<int>((j1 - j0 + kBlockN - 1) / kBlockN) : 0;

  // The chunk's page indices (pages page_of(j0) .. page_of(j1 - 1)), then Q's rows (zeros past
  // the group's rows).
  const int64_t p0 = page_of(j0, g);
  const int n_pages = tiles > 0 ? static_cast<int>(page_of(j1 - 1, g) - p0 + 1) : 0;
  for (int i = tid; i < n_pages; i += kThreads) s_pages[i] = block_table[bi * g.max_pages + p0 + i];
  const uint32_t sq = device::smem_addr(s_q);
  load_q_tile<kD>(sq, q, bi, hk, row0, g, tid);
  __syncthreads();

  // Stage `slot` <- keys [j0 + 64 tile, +64): K and V rows at the same offset of their pools.
  const uint32_t s_kv = device::smem_addr(smem);
  auto load_tile = [&](int tile, int slot) {
    const uint32_t sk = s_kv + slot * 2 * kTileBytes;
    load_kv_stage<kD>(sk, sk + kTileBytes, k_cache, v_cache, tid, [&](int, int r) -> int64_t {
      const int64_t j = j0 + int64_t(tile) * kBlockN + r;
      if (j >= j1) return -1;
      return kv_row_offset(s_pages[page_of(j, g) - p0], hk, j, g, kD);
    });
  };

  // This thread's two rows of the m16 tile (lane / 4 and lane / 4 + 8) see keys below lim[h]:
  // the chunk's end and the row's causal limit len - qlen + t + 1 (padding rows: the chunk's).
  int64_t lim[2];
  row_limits(lim, lane, row0, j1, len, g);
  GqaWarpState<kD> state;
  state.reset();

#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < tiles) load_tile(st, st);
    device::cp_async_commit();
  }
  for (int i = 0; i < tiles; ++i) {
    device::cp_async_wait<kStages - 2>();
    __syncthreads();  // stage i landed for every thread; stage i - 1 is free for reuse
    if (i + kStages - 1 < tiles) load_tile(i + kStages - 1, (i + kStages - 1) % kStages);
    device::cp_async_commit();

    const uint32_t sk = s_kv + (i % kStages) * 2 * kTileBytes;
    gqa_mma_stage<kD>(state, sq, sk, sk + kTileBytes, lane, warp * 16, j0 + int64_t(i) * kBlockN,
                      lim, g.scale_log2);
  }
  device::cp_async_wait<0>();
  __syncthreads();  // every warp is done with the stages: they hold the warps' partials now

  write_split_rows<kD, Cfg::kWarps, kThreads>(state, reinterpret_cast<float*>(smem), s_max, s_sum,
                                              out, bi, hk, row0, split, splits, g);
}

/// v03's arguments, resolved once (prepare); operator() enqueues the kernel and the merge.
struct GqaLaunch {
  const __nv_bfloat16 *q, *k_cache, *v_cache;
  const int32_t *seq_lens, *block_table;
  SplitOut out;
  GqaGeometry g;
  int64_t b, rows, d;

  template <int kD>
  void enqueue(cudaStream_t stream) const {
    device::opt_in_dynamic_smem<gqa_mma_kernel<kD>>(static_cast<int>(Cfg::smem_bytes(kD, 1)));
    const dim3 grid(static_cast<unsigned>(out.plan.max_splits),
                    static_cast<unsigned>(g.hkv * g.row_tiles), static_cast<unsigned>(b));
    gqa_mma_kernel<kD>
        <<<grid, kThreads, static_cast<size_t>(Cfg::smem_bytes(kD, g.page)), stream>>>(
            q, k_cache, v_cache, seq_lens, block_table, out, g);
    KLAB_CHECK_LAUNCH();
    launch_merge_splits<kD>(out, seq_lens, rows, int64_t(g.qlen) * g.hq, stream);
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() { enqueue<kD>(stream); });
  }
};

SplitKvPlan v03_plan(const Problem& p) { return plan_v03(dims_of(p), device_info().sm_count); }

GqaLaunch gqa_launch(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return {b.ptr<const __nv_bfloat16>("q"),
          b.ptr<const __nv_bfloat16>("k_cache"),
          b.ptr<const __nv_bfloat16>("v_cache"),
          b.ptr<const int32_t>("seq_lens"),
          b.ptr<const int32_t>("block_table"),
          split_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), b.workspace, v03_plan(p),
                    s.rows(), s.d),
          gqa_geometry(s),
          s.b,
          s.rows(),
          s.d};
}

}  // namespace

Variant gpu_v03_gqa_mma() {
  return split_kv_variant(
      "v03_gqa_mma",
      "split-KV with the group's query heads sharing each K/V load: pages gathered by cp.async "
      "into a 2-4 stage ring, S and P V on mma.sync m16n8k16, fp32",
      gqa_launch, v03_plan, [](const Problem& p) {
        const Dims s = dims_of(p);
        if (s.b > 65535) return Status::no("decode_attention.v03: b above 65535 (grid z)");
        if (s.hkv * Cfg::row_tiles(s) > 65535)
          return Status::no("decode_attention.v03: hkv x row tiles above 65535 (grid y)");
        return Status::yes();
      });
}

}  // namespace klab::decode_attention

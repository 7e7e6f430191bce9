// v06 tma_pages: v03's split-KV CTA fed by the copy engine, in one launch. A CTA holds one m16
// tile of a KV head's query rows and one chunk of a sequence's keys, as v03's; a fifth warp, the
// producer, gathers the chunk's pages with TMA: each (page, KV head) of the HND cache is one
// contiguous run of page x D elements, read as boxes of min(page, 64) key rows x 64 columns of a
// 2-D tensor map over the pool (rows: pages x KV heads x page slots), 128-byte swizzled, into a
// ring of 64-key stages that completes on mbarriers (full: the stage's bytes landed; empty: the
// four math warps are done with it). Its lanes read the stage's block-table entries one stage
// ahead (one lane a page) and issue one page's boxes each. The math warps run gqa_mma.cuh's stage
// (S and P V on mma.sync m16n8k16, online softmax in registers) on the swizzled tiles; on the
// chunk's last stage each warp zeroes its V rows past the chunk first (a page's slots past the
// sequence, or pages not loaded, may hold anything, and 0 x NaN is NaN). A sequence cut into
// several splits is merged in the same launch: each split writes its normalised fp32 partial and
// lse, fences, and counts itself in on its row group's counter; the CTA that arrives last merges
// the splits by log-sum-exp in split order (partial_merge.cuh: the same bits whoever arrives
// last) and resets the counter.
// Changes from v03: (1) TMA boxes of whole pages issued by one warp instead of 16-byte cp.async
// by every thread (2048 a 32 KiB stage): the hypothesis is that v03's batched rate, ~3.9 TB/s
// (~30 GB/s an SM, where cuDNN reads 4.1-4.4 TB/s), is the SM's limit on cp.async copies in
// flight, not DRAM's; the copy engine keeps a stage's 32 KiB in flight as 16 requests. (2) No
// merge kernel: v03's walks a row's splits one dependent L2 load after another (~25 us at
// (1, 4k) and (1, 32k), ~50 us at (1, 128k) by the worklog's fit); here the last CTA's loads
// are independent. (3) The chunk comes from a wave model (plan_v06) instead of the total spread
// over one wave and capped at 2048 keys: (64, 4k) one split of 4096 keys (512 CTAs, two waves)
// instead of two of 2048; (1, 128k) 32 splits of 4096 in one wave instead of 64 in two.
// (4) The page indices are not staged before the first copy: a CTA's first copies wait for one
// table entry, not for the chunk's whole index list.
// Expected bottleneck: DRAM reads of K and V at the batched shapes and long sequences (two CTAs
// an SM at D = 128, two 32 KiB stages in flight each); at (1, 4k) the chain of one launch: seq
// len and table entry, the first stage, the epilogue, the fence and atomic, the merge's loads.
// Prediction (written before it ran), Qwen3-8B heads (32 / 8, D = 128), fraction of the read
// ceiling (~4.5 TB/s), pages 16 and 64 alike: if (1) holds, (256, 2k), (64, 4k), (16, 8k)
// 0.90-0.95 (v03 0.79-0.86); if it does not, within 3% of v03 there. (1, 128k) 0.88-0.93 (v03
// 0.60); (1, 32k) 0.75-0.85 (v03 0.47; the fixed ~5 us of start, epilogue and merge is 15% of
// a 30 us stream); (1, 4k) 7-10 us (v03 35 us, cuDNN 15.6); the ragged batch 0.75-0.85 (v03
// 0.69: its longest sequence takes 3 splits of ~5.5k keys on the wave model).
// Requirements: D = 64, 128 or 256 (v03's stages: 4 x 16, 3 x 32, 2 x 64 KiB); pages a power of
// two from 8 tokens (whole 1024-byte swizzle atoms; a stage of 64 keys spans whole pages or lies
// in one); the pool's rows (pages x KV heads x page) and a stage's page count within i32; b and
// Hkv x row tiles at most 65535 (grid z and y); the workspace of CountedSplitPlan.
#include <cuda_bf16.h>

#include "kernels/decode_attention/gqa_mma.cuh"
#include "kernels/decode_attention/partial_merge.cuh"
#include "kernels/decode_attention/split_kv.cuh"
#include "kernels/decode_attention/tma_pages.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::decode_attention {

namespace {

using Cfg = TmaPagesConfig;
using Gqa = GqaMmaConfig;
constexpr int kBlockN = Gqa::kBlockN, kRows = Gqa::kRows, kThreads = Cfg::kThreads;
constexpr int kConsumerWarps = Cfg::kConsumerWarps, kProducerWarp = kConsumerWarps;
constexpr int kConsumerThreads = kConsumerWarps * 32;
static_assert(kConsumerThreads == Gqa::kThreads, "load_q_tile strides over v03's four warps");

// Block (split, hk * row_tiles + row tile, bi); kThreads threads: four math warps, then the
// producer warp. Dynamic shared memory (its base rounded up to 1024 bytes): kStages x (K tile,
// V tile) of kBlockN x kD bf16 swizzled, then Q's kRows x kD bf16 tile.
template <int kD>
__global__ void __launch_bounds__(kThreads)
    tma_pages_kernel(const __grid_constant__ CUtensorMap k_map,
                     const __grid_constant__ CUtensorMap v_map, const __nv_bfloat16* __restrict__ q,
                     const int32_t* __restrict__ seq_lens, const int32_t* __restrict__ block_table,
                     SplitOut out, int* __restrict__ counters, GqaGeometry g) {
  constexpr int kStages = Gqa::stages(kD);
  constexpr uint32_t kTileBytes = StageCopy<kD>::kTileBytes;  // K or V of one stage
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  __shared__ float s_max[kConsumerWarps][kRows], s_sum[kConsumerWarps][kRows];
  __shared__ float s_m[kRows], s_s[kRows];
  __shared__ int s_last;
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + Cfg::kAlign - 1) / Cfg::kAlign * Cfg::kAlign);
  unsigned char* s_q = smem + kStages * 2 * kTileBytes;

  const int split = static_cast<int>(blockIdx.x);
  const int hk = static_cast<int>(blockIdx.y) / g.row_tiles;
  const int row0 = (static_cast<int>(blockIdx.y) % g.row_tiles) * kRows;
  const int64_t bi = blockIdx.z;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  // One round trip before the first copy: the length, Q's rows and the first stage's table
  // entries are loaded together (none needs another).
  const int64_t len = seq_lens[bi];
  const int64_t j0 = out.plan.key_begin(split);
  const int32_t* table_row = block_table + bi * g.max_pages;
  const uint32_t sq = device::smem_addr(s_q);
  int next = -1;  // the producer lane's page of the stage it issues next
  if (warp == kProducerWarp)
    next = StagePages::entry_ahead(table_row, j0, lane, g);
  else
    load_q_tile<kD>(sq, q, bi, hk, row0, g, tid);
  const int splits = out.plan.splits_of(len);
  if (split >= splits) return;  // the grid is sized for the longest sequence
  const int64_t j1 = out.plan.key_end(split, len);
  const int tiles = j1 > j0 ? static_cast<int>((j1 - j0 + kBlockN - 1) / kBlockN) : 0;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      device::mbarrier_init(&full[s], 1);
      device::mbarrier_init(&empty[s], kConsumerWarps);
    }
    device::fence_mbarrier_init();
  }
  __syncthreads();  // the barriers initialised, Q's tile stored

  if (warp == kProducerWarp) {
    // The producer: stage i + 1's table entries are loaded (one a lane) before the wait for
    // stage i's slot, so a table load is never on a refill's path.
    auto stage = [&](int i) {
      const int64_t k0 = j0 + int64_t(i) * kBlockN;
      return StagePages{k0, min(j1, k0 + kBlockN)};
    };
    if (lane == 0) {
      device::prefetch_tensor_map(&k_map);
      device::prefetch_tensor_map(&v_map);
    }
    for (int i = 0; i < tiles; ++i) {
      const int pool_page = next;
      if (i + 1 < tiles) next = stage(i + 1).entry(table_row, lane, g);
      const int slot = i % kStages;
      if (i >= kStages) device::mbarrier_wait(&empty[slot], ((i / kStages) - 1) & 1);
      stage(i).template issue<kD>(&k_map, &v_map, smem + slot * 2 * kTileBytes, &full[slot],
                                  pool_page, hk, lane, g);
    }
  }

  // The math warps: rows lane / 4 and lane / 4 + 8 see keys below lim[h].
  int64_t lim[2];
  row_limits(lim, lane, row0, j1, len, g);
  GqaWarpState<kD> state;
  state.reset();
  if (warp < kConsumerWarps) {
    const uint32_t s_kv = device::smem_addr(smem);
    for (int i = 0; i < tiles; ++i) {
      const int slot = i % kStages;
      device::mbarrier_wait(&full[slot], (i / kStages) & 1);
      const uint32_t sk = s_kv + slot * 2 * kTileBytes, sv = sk + kTileBytes;
      const int64_t key_base = j0 + int64_t(i) * kBlockN;
      zero_v_rows_past<kD>(sv, warp, lane, key_base, j1);
      gqa_mma_stage<kD, TmaKvTile<kD>>(state, sq, sk, sv, lane, warp * 16, key_base, lim,
                                       g.scale_log2);
      __syncwarp();
      if (lane == 0) device::mbarrier_arrive(&empty[slot]);
    }
  }
  __syncthreads();  // every stage consumed: they hold the warps' partials now

  write_split_rows<kD, kConsumerWarps, kThreads>(state, reinterpret_cast<float*>(smem), s_max,
                                                 s_sum, out, bi, hk, row0, split, splits, g);
  if (splits == 1) return;

  // The arrival: the partial's stores, a fence, a barrier, one atomic; the last split to arrive
  // sees every partial through the others' fences and its own.
  int* counter = counters + bi * (int64_t(g.hkv) * g.row_tiles) + blockIdx.y;
  __threadfence();
  __syncthreads();
  if (tid == 0) s_last = atomicAdd(counter, 1) == splits - 1;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  const int rows = min(kRows, g.rows_per_head - row0);
  auto row_of = [&](int r) { return global_row(bi, hk, row0 + r, g); };
  merge_partials<kD, kThreads, 8>(
      rows, splits,
      [&](int i, int r) { return __ldcg(out.ws_lse + out.plan.partial_index(row_of(r), i)); },
      [&](int i, int r, int c4) {
        return __ldcg(
            reinterpret_cast<const float4*>(out.ws_o + out.plan.partial_index(row_of(r), i) * kD) +
            c4);
      },
      [&](int r, int c4, float4 x, float lse) {
        const int64_t row = row_of(r);
        *reinterpret_cast<uint2*>(out.o + row * kD + c4 * 4) = make_uint2(
            device::pack2<__nv_bfloat16>(x.x, x.y), device::pack2<__nv_bfloat16>(x.z, x.w));
        if (c4 == 0) out.lse[row] = lse;
      },
      s_m, s_s, CtaSync{});
  if (tid == 0) *counter = 0;  // for the next launch
}

/// v06's arguments, resolved once (prepare): the tensor maps over the pools, the plan.
struct TmaPagesLaunch {
  CUtensorMap k_map, v_map;
  const __nv_bfloat16* q;
  const int32_t *seq_lens, *block_table;
  SplitOut out;
  int* counters;
  GqaGeometry g;
  int64_t b, d;

  template <int kD>
  void enqueue(cudaStream_t stream) const {
    const int smem = static_cast<int>(Cfg::smem_bytes(kD));
    device::opt_in_dynamic_smem<tma_pages_kernel<kD>>(smem);
    const dim3 grid(static_cast<unsigned>(out.plan.max_splits),
                    static_cast<unsigned>(g.hkv * g.row_tiles), static_cast<unsigned>(b));
    tma_pages_kernel<kD><<<grid, kThreads, static_cast<size_t>(smem), stream>>>(
        k_map, v_map, q, seq_lens, block_table, out, counters, g);
    KLAB_CHECK_LAUNCH();
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() { enqueue<kD>(stream); });
  }
};

CountedSplitPlan v06_plan(const Problem& p) { return plan_v06(dims_of(p), device_info().sm_count); }

TmaPagesLaunch tma_pages_launch(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  const CountedSplitPlan plan = v06_plan(p);
  const SplitOut out =
      split_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), b.workspace, plan, s.rows(), s.d);
  int* counters =
      out.ws_lse ? reinterpret_cast<int*>(out.ws_lse + s.rows() * plan.max_splits) : nullptr;
  return {pool_map(b.ptr<const void>("k_cache"), s),
          pool_map(b.ptr<const void>("v_cache"), s),
          b.ptr<const __nv_bfloat16>("q"),
          b.ptr<const int32_t>("seq_lens"),
          b.ptr<const int32_t>("block_table"),
          out,
          counters,
          gqa_geometry(s),
          s.b,
          s.d};
}

}  // namespace

Variant gpu_v06_tma_pages() {
  return split_kv_variant(
      "v06_tma_pages",
      "split-KV in one launch: a producer warp gathers whole pages by TMA (128-byte swizzled "
      "boxes) into an mbarrier ring, v03's mma.sync math warps, splits merged by the last CTA",
      tma_pages_launch, v06_plan, [](const Problem& p) {
        const Dims s = dims_of(p);
        if (Status st = tma_page_limits("v06", s); !st.ok()) return st;
        if (s.b > 65535) return Status::no("decode_attention.v06: b above 65535 (grid z)");
        if (s.hkv * Gqa::row_tiles(s) > 65535)
          return Status::no("decode_attention.v06: hkv x row tiles above 65535 (grid y)");
        return Status::yes();
      });
}

}  // namespace klab::decode_attention

#pragma once
// What the FlashAttention 3 rungs (v04_fa3_wgmma, v05_fa3_overlap, v06_fa3_persistent) share:
// the block's configuration and mbarriers, where a tile sits in the problem, the producer's TMA
// loads (Q, and a tile's K and V in kv_step's order), the consumers' pieces (the two GEMMs, the
// causal mask, the online softmax of one key block, the epilogue), the block's role split, and
// the host side (tensor maps, the enqueue-only launch, the refusals). A rung provides its
// consumer loop and its kernel; the tiles, descriptors and the P mapping are in fa3_tile.hpp,
// the load order in fa3_schedule.hpp, both checked on the CPU.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/attention/fa3_fp8.hpp"
#include "kernels/attention/fa3_schedule.hpp"
#include "kernels/attention/fa3_tile.hpp"
#include "kernels/attention/family.hpp"
#include "kernels/attention/quad_softmax.cuh"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/opaque.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/tree_reduce.hpp"
#include "klab/device/warpgroup_sm90.cuh"
#include "klab/device/wgmma_fp8_sm90.cuh"
#include "klab/device/wgmma_fragment.hpp"
#include "klab/device/wgmma_sm90.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::attention::fa3 {

/// The FP8 rung's element type (v12): e4m3 Q, K and V, bf16 O; P's A registers a k32 step.
template <class T>
inline constexpr bool kIsFp8 = std::is_same_v<T, __nv_fp8_e4m3>;
template <class T>
using OutputOf = std::conditional_t<kIsFp8<T>, __nv_bfloat16, T>;
/// The k-steps of P V over a key block of kBlockN: 16 keys (16-bit), 32 (e4m3).
template <class T, int kBlockN>
inline constexpr int kPSteps = kIsFp8<T> ? kBlockN / 32 : kBlockN / 16;

/// A block of kConsumerWarpgroups_ consumer warpgroups of 64 query rows and a producer
/// warpgroup over kStages (K, V) stages of kBlockN_ keys: two consumers (setmaxnreg 232) beside
/// a producer at 40, or three (160) beside one at 24; kKvLag: how many blocks the producer's V
/// loads trail its K loads (fa3_schedule.hpp's kv_step); kPInSmem_: P V reads P from shared
/// memory (v11) instead of registers; kIntraWgOverlap_: a consumer's softmax runs under its own
/// previous P V (v05 on: fa3_overlap.cuh's consume_tile), or, false (v22), after it, each wgmma
/// group waited for (consume_tile_serial).
template <int kD, int kStages_, int kKvLag_ = 0, int kConsumerWarpgroups_ = 2,
          int kBlockN_ = kDefaultBlockN<kD>, bool kPInSmem_ = false, bool kIntraWgOverlap_ = true>
struct Config
    : device::WarpSpecialized</*consumer warps*/ 4 * kConsumerWarpgroups_,
                              /*producer registers*/ (kConsumerWarpgroups_ > 2 ? 24 : 40)> {
  static constexpr int kConsumerWarpgroups = kConsumerWarpgroups_;
  using Tiles = fa3::Tiles<kD, kStages_, 64 * kConsumerWarpgroups_, kBlockN_, kPInSmem_>;
  static constexpr int kBlockM = Tiles::kBlockM, kBlockN = Tiles::kBlockN;
  static constexpr int kStages = Tiles::kStages;
  static constexpr bool kPInSmem = Tiles::kPInSmem;
  static constexpr bool kIntraWgOverlap = kIntraWgOverlap_;
  static constexpr int kKvLag = kKvLag_;
  static constexpr int kSmemBytes = fa3::kSmemBytes<Tiles>;
  static_assert(Config::kBlockM == 64 * (Config::kConsumerWarps / 4),
                "one m64 block per consumer warpgroup");
  static_assert(kSmemBytes <= kMaxSmemBytes);
  static_assert(kScratchBytes >= 16 + 4 * Config::kConsumerWarps, "a pin word per consumer warp");
};

/// The ring's barriers, after the tiles, and the persistent rung's tile index after them.
template <int kStages>
struct Barriers {
  uint64_t* full_q;
  uint64_t* empty_q;   // only the persistent rung reloads Q
  uint64_t* full_k;    // [kStages]
  uint64_t* full_v;    // [kStages]
  uint64_t* empty_k;   // [kStages]
  uint64_t* empty_v;   // [kStages]
  int* tile;           // [4] the tile whose Q full_q's phase delivers (persistent rung)
  float* pin;          // [16] device::keep_before_wgmma_wait's words, one a consumer warp
  uint64_t* q_halves;  // [4] v18: Q's half h (consumer warpgroup h's 64 rows): full, then empty
  int* half_tiles;     // [8] v18: the tile whose Q half h's full phase delivers, at 4 h
  __device__ explicit Barriers(unsigned char* at)
      : full_q(reinterpret_cast<uint64_t*>(at)),
        empty_q(full_q + 1),
        full_k(empty_q + 1),
        full_v(full_k + kStages),
        empty_k(full_v + kStages),
        empty_v(empty_k + kStages),
        tile(reinterpret_cast<int*>(empty_v + kStages)),
        pin(reinterpret_cast<float*>(empty_v + kStages + 2)),
        q_halves(empty_v + kStages + 2 + 8),
        half_tiles(reinterpret_cast<int*>(q_halves + 4)) {}
  __device__ uint64_t* full_q_half(int h) const { return q_halves + 2 * h; }
  __device__ uint64_t* empty_q_half(int h) const { return q_halves + 2 * h + 1; }
  __device__ int* half_tile(int h) const { return half_tiles + 4 * h; }

  /// Thread 0 initialises them (the caller then synchronises the block): full barriers take the
  /// producer's arrive_expect_tx, empty ones one arrival from lane 0 of each consumer warp.
  __device__ void init(int consumer_warps) const {
    device::mbarrier_init(full_q, 1);
    device::mbarrier_init(empty_q, consumer_warps);
    for (int s = 0; s < kStages; ++s) {
      device::mbarrier_init(&full_k[s], 1);
      device::mbarrier_init(&full_v[s], 1);
      device::mbarrier_init(&empty_k[s], consumer_warps);
      device::mbarrier_init(&empty_v[s], consumer_warps);
    }
    device::fence_mbarrier_init();
  }
  /// v18's (thread 0, with init): each Q half's full barrier takes the producer's
  /// arrive_expect_tx, its empty one an arrival from lane 0 of each warp of its warpgroup.
  __device__ void init_q_halves(int warps_a_half) const {
    for (int h = 0; h < 2; ++h) {
      device::mbarrier_init(full_q_half(h), 1);
      device::mbarrier_init(empty_q_half(h), warps_a_half);
    }
    device::fence_mbarrier_init();
  }
};

/// Where a block sits in the problem (computed after setmaxnreg: ptxas keeps values that live
/// across it in local memory).
struct TileOf {
  int64_t n0;  // the tile's first query row
  int h, hk, bi;
  KeyBlocks blocks;
};

/// Query tile m_tile of query head h, batch bi.
template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOf tile_at(const Geometry& g, int64_t m_tile, int h, int bi) {
  TileOf t;
  t.n0 = m_tile * kBlockM;
  t.h = h;
  t.hk = int(h / g.group);
  t.bi = bi;
  t.blocks = key_blocks(g.nq, g.nkv, g.causal, t.n0, kBlockM, kBlockN);
  return t;
}

template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOf tile_of(const Geometry& g) {
  const int64_t m_tiles = (g.nq + kBlockM - 1) / kBlockM;
  // Causal grids run the longest tiles (the last query rows) first.
  const int64_t m_tile = g.causal ? m_tiles - 1 - blockIdx.x : blockIdx.x;
  return tile_at<kBlockM, kBlockN>(g, m_tile, int(blockIdx.y), int(blockIdx.z));
}

/// The producer's place in the K and V rings (they advance separately: v05's V trails its K).
template <int kStages>
struct KvRing {
  device::RingSlot<kStages> k, v;
};

/// The producer (one thread): Q's panels of tile t, arriving on full_q (expecting its bytes).
template <class C>
__device__ __forceinline__ void load_q(const CUtensorMap* q_map, unsigned char* smem,
                                       const Barriers<C::kStages>& bars, const TileOf& t) {
  using Q = typename C::Tiles::Q;
  device::mbarrier_arrive_expect_tx(bars.full_q, Q::kBytes);
#pragma unroll
  for (int p = 0; p < Q::kPanels; ++p)
    device::tma_load_4d(smem + p * Q::kPanelBytes, q_map, p * kPanelCols, t.h, int(t.n0), t.bi,
                        bars.full_q);
}

/// The producer (one thread, v18): half h of tile t's Q (consumer warpgroup h's 64 rows, by
/// q_half_map's 64-row boxes) into those rows of Q's tile, arriving on the half's full barrier.
template <class C>
__device__ __forceinline__ void load_q_half(const CUtensorMap* q_half_map, unsigned char* smem,
                                            const Barriers<C::kStages>& bars, const TileOf& t,
                                            int h) {
  using Q = typename C::Tiles::Q;
  static_assert(C::kBlockM == 128, "two halves of 64 rows, one a consumer warpgroup");
  device::mbarrier_arrive_expect_tx(bars.full_q_half(h), Q::kBytes / 2);
#pragma unroll
  for (int p = 0; p < Q::kPanels; ++p)
    device::tma_load_4d(smem + p * Q::kPanelBytes + uint32_t(64 * h) * kRowBytes, q_half_map,
                        p * kPanelCols, t.h, int(t.n0) + 64 * h, t.bi, bars.full_q_half(h));
}

/// The producer (one thread, v18): tile t's Q (both halves' boxes of q_half_map) into L2, so that
/// the load_q_half of each, once its rows are handed back, reads L2 rather than DRAM.
template <class C>
__device__ __forceinline__ void prefetch_q_halves(const CUtensorMap* q_half_map, const TileOf& t) {
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int p = 0; p < C::Tiles::Q::kPanels; ++p)
      device::tma_prefetch_4d(q_half_map, p * kPanelCols, t.h, int(t.n0) + 64 * h, t.bi);
}

/// The producer (one thread): one (kBlockN, kD) panel tile of key block jb (K or V) into ring
/// slot `at`, once its consumers have handed the slot back.
template <class C>
__device__ __forceinline__ void load_kv(const CUtensorMap* map, unsigned char* smem,
                                        uint32_t tile_offset, uint64_t* full, uint64_t* empty,
                                        device::RingSlot<C::kStages>& at, const TileOf& t, int jb) {
  using KV = typename C::Tiles::KV;
  // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
  device::mbarrier_wait(&empty[at.index], at.phase ^ 1u);
  device::mbarrier_arrive_expect_tx(&full[at.index], KV::kBytes);
#pragma unroll
  for (int p = 0; p < KV::kPanels; ++p)
    device::tma_load_4d(smem + tile_offset + p * KV::kPanelBytes, map, p * kPanelCols, t.hk,
                        jb * C::kBlockN, t.bi, &full[at.index]);
  at = at.next();
}

/// The producer (one thread): steps first .. end - 1 of tile t's K and V panels (kv_step's order
/// for C::kKvLag: the last block first), continuing the rings at `ring`.
template <class C>
__device__ __forceinline__ void load_tile_kv_steps(const CUtensorMap* k_map,
                                                   const CUtensorMap* v_map, unsigned char* smem,
                                                   const Barriers<C::kStages>& bars,
                                                   const TileOf& t, KvRing<C::kStages>& ring,
                                                   int first, int end) {
  using Tiles = typename C::Tiles;
  const int n = int(t.blocks.count);
  for (int j = first; j < end; ++j) {
    const KvStep step = kv_step(j, n, C::kKvLag);
    if (step.k_block >= 0)
      load_kv<C>(k_map, smem, Tiles::k_tile(ring.k.index), bars.full_k, bars.empty_k, ring.k, t,
                 n - 1 - step.k_block);
    if (step.v_block >= 0)
      load_kv<C>(v_map, smem, Tiles::v_tile(ring.v.index), bars.full_v, bars.empty_v, ring.v, t,
                 n - 1 - step.v_block);
  }
}

/// The producer (one thread): every visited key block's K and V panels of tile t (the last
/// block first), in kv_step's order for C::kKvLag, continuing the rings at `ring`.
template <class C>
__device__ __forceinline__ void load_tile_kv(const CUtensorMap* k_map, const CUtensorMap* v_map,
                                             unsigned char* smem, const Barriers<C::kStages>& bars,
                                             const TileOf& t, KvRing<C::kStages>& ring) {
  load_tile_kv_steps<C>(k_map, v_map, smem, bars, t, ring, 0,
                        kv_steps(int(t.blocks.count), C::kKvLag));
}

/// The producer of a one-tile block (one thread): Q's panels, then every visited key block's K
/// and V panels (the last block first) into the ring, each slot once its consumers have handed
/// it back.
template <class C>
__device__ __forceinline__ void produce(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                        const CUtensorMap* v_map, unsigned char* smem,
                                        const Barriers<C::kStages>& bars, const TileOf& t) {
  if (t.blocks.count == 0) return;  // every row of the tile is empty: nothing to read
  load_q<C>(q_map, smem, bars, t);
  KvRing<C::kStages> ring;
  load_tile_kv<C>(k_map, v_map, smem, bars, t, ring);
}

/// Lane 0 of each consumer warp hands a ring slot (or Q) back: every wgmma of the warp that read
/// it has been waited for.
__device__ __forceinline__ void release(uint64_t* empty, int lane) {
  if (lane == 0) device::mbarrier_arrive(empty);
}

/// Issues S = Q K^T for consumer warpgroup wg over stage s's K: kD / 16 k-steps of m64 x kBlockN
/// (e4m3: kD / 32 of 32 bytes each; the tiles' byte geometry is the same) (the caller fences
/// before and commits after). kN < kBlockN (v19, 16-bit types): the block's first kN keys only,
/// into sc's first kN / 2 registers (the accumulators of an m64 x kN wgmma are the first ones of
/// the m64 x kBlockN layout, n8 block by n8 block).
template <class C, class T, int kD, int kN = C::kBlockN>
__device__ __forceinline__ void issue_s(float (&sc)[C::kBlockN / 2], uint32_t s_base, int wg,
                                        int s) {
  using Tiles = typename C::Tiles;
  static_assert(kN == C::kBlockN || (!kIsFp8<T> && kN < C::kBlockN && kN % 8 == 0));
  if constexpr (kN < C::kBlockN) {
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      device::wgmma_ss<kN, T, /*A K-major*/ 0, /*B K-major*/ 0>(
          reinterpret_cast<float(&)[kN / 2]>(sc), Tiles::Q::desc_k_major(s_base, 64 * wg, kk),
          Tiles::KV::desc_k_major(s_base + Tiles::k_tile(s), 0, kk), kk > 0);
  } else if constexpr (kIsFp8<T>) {
    static_assert(C::kBlockN == kFp8BlockN && kD == kFp8D);
#pragma unroll
    for (int kk = 0; kk < kD / 32; ++kk)
      device::wgmma_ss_e4m3_n128(sc, Tiles::Q::desc_k_major(s_base, 64 * wg, kk),
                                 Tiles::KV::desc_k_major(s_base + Tiles::k_tile(s), 0, kk), kk > 0);
  } else {
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      device::wgmma_ss<C::kBlockN, T, /*A K-major*/ 0, /*B K-major*/ 0>(
          sc, Tiles::Q::desc_k_major(s_base, 64 * wg, kk),
          Tiles::KV::desc_k_major(s_base + Tiles::k_tile(s), 0, kk), kk > 0);
  }
}

/// Issues O += P V over stage s's V: P the register A operand, kBlockN / 16 k-steps of m64 x kD
/// (e4m3: kBlockN / 32 over Vt's tile, K-major, fa3_fp8.hpp).
template <class C, class T, int kD>
__device__ __forceinline__ void issue_pv(float (&acc)[kD / 2],
                                         const uint32_t (&pa)[kPSteps<T, C::kBlockN>][4],
                                         uint32_t s_base, int s) {
  using Tiles = typename C::Tiles;
  if constexpr (kIsFp8<T>) {
#pragma unroll
    for (int ks = 0; ks < C::kBlockN / 32; ++ks)
      device::wgmma_rs_e4m3_n128(acc, pa[ks],
                                 Tiles::KV::desc_k_major(s_base + Tiles::v_tile(s), 0, ks), true);
  } else {
#pragma unroll
    for (int ks = 0; ks < C::kBlockN / 16; ++ks)
      device::wgmma_rs<kD, T, /*B MN-major*/ 1>(
          acc, pa[ks], Tiles::KV::desc_mn_major(s_base + Tiles::v_tile(s), ks), true);
  }
}

/// Issues O += P V over stage s's V with P from consumer warpgroup wg's shared tile (v11):
/// kBlockN / 16 k-steps of m64 x kD, both operands from shared memory.
template <class C, class T, int kD>
__device__ __forceinline__ void issue_pv_smem(float (&acc)[kD / 2], uint32_t s_base, int wg,
                                              int s) {
  using Tiles = typename C::Tiles;
  // P's tile does not move: ptxas would hoist its kBlockN / 16 descriptors out of the loop and
  // keep them (two registers each) live through the softmax. An opaque copy of the address makes
  // them a few integer adds before each issue instead.
  uint32_t p_addr = s_base + Tiles::p_tile(wg);
  asm volatile("" : "+r"(p_addr));
#pragma unroll
  for (int ks = 0; ks < C::kBlockN / 16; ++ks)
    device::wgmma_ss<kD, T, /*A K-major*/ 0, /*B MN-major*/ 1>(
        acc, Tiles::P::desc_k_major(p_addr, 0, ks),
        Tiles::KV::desc_mn_major(s_base + Tiles::v_tile(s), ks), true);
}

/// P rounded to T into consumer warpgroup wg's shared tile (v11), where the next P V reads it
/// through the async proxy: each thread stores its accumulator pairs (fa3_tile.hpp's
/// p_pair_offset: one row, two adjacent keys; the 128-byte swizzle puts a warp's eight rows of
/// one 16-byte chunk on eight different chunks, so a store instruction is conflict-free) and
/// fences them for the async proxy. The warpgroup must synchronise before the wgmma that reads
/// the tile.
template <class C, class T>
__device__ __forceinline__ void store_p(const float (&sc)[C::kBlockN / 2], uint32_t s_base, int wg,
                                        int tid) {
  const PStore at = p_store_of(tid);
  const uint32_t tile = s_base + C::Tiles::p_tile(wg);
#pragma unroll
  for (int nb = 0; nb < C::kBlockN / 8; ++nb)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      device::st_shared_u32(tile + p_pair_offset(at, nb, h),
                            device::pack2<T>(sc[4 * nb + 2 * h], sc[4 * nb + 2 * h + 1]));
  device::fence_proxy_async_shared();
}

/// Keeps P's registers unchanged until the P V that reads them has been waited for.
template <int kSteps>
__device__ __forceinline__ void fence_p(uint32_t (&pa)[kSteps][4]) {
#pragma unroll
  for (int ks = 0; ks < kSteps; ++ks)
#pragma unroll
    for (int e = 0; e < 4; ++e) device::wgmma_fence_operand(pa[ks][e]);
}

/// This consumer thread's place: its two query rows (wgmma_acc_coord's rows of registers 0 and
/// 2) and its lane in the rows' quad. Rows are 32-bit (can_implement keeps nq and nkv below
/// 2^31): every register counts at D = 256.
struct ConsumerThread {
  int tid, lane, quad;
  int row[2];
  __device__ ConsumerThread(const TileOf& t, int wg)
      : tid(device::warpgroup_thread()), lane(tid % 32), quad(lane % 4) {
    row[0] = int(t.n0) + 64 * wg + device::wgmma_acc_coord(tid, 0).row;
    row[1] = row[0] + 8;
  }
};

/// Masks key block jb's scores past each row's last visible key (causal diagonal, end of keys).
template <int kBlockN>
__device__ __forceinline__ void mask_block(float (&sc)[kBlockN / 2], int jb,
                                           const ConsumerThread& th, const Geometry& g) {
  // The last visible key of each row relative to this lane's first column in the block,
  // clamped to [-1, kBlockN]: column 8 (i / 4) + i % 2 of the lane is masked past it.
  // 32-bit: row + nkv - nq lies in (-2^31, nkv) for nq, nkv below 2^31 (can_implement).
  const int last_key = int(g.nkv) - 1;
  int last[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    int lim = g.causal ? th.row[r] + int(g.causal_offset) : last_key;
    lim = min(lim, last_key) - jb * kBlockN - 2 * th.quad;
    last[r] = lim < -1 ? -1 : (lim > kBlockN ? kBlockN : lim);
  }
#pragma unroll
  for (int i = 0; i < kBlockN / 2; ++i)
    if (8 * (i / 4) + i % 2 > last[(i / 2) % 2]) sc[i] = -INFINITY;
}

/// The online softmax's two options from FlashAttention 4 (v07 and v08 measure them on Hopper):
/// - kPolyEvery: of each row's terms in a block, every kPolyEvery-th by device::ex2_poly on the
///   FMA and integer units instead of the MUFU (0: none), which pays only while the MUFU, not
///   the issue slots, bounds the softmax (D = 64: half the GEMM time per exponential of D = 128);
/// - kLazyRescale: a warp keeps its rows' running max (and leaves O and l unscaled) until some
///   row's max grows by more than kLazyRescaleLog2 (log2 units: terms then stay below 2^8, far
///   inside fp32 and the P types); the division by l at the end is exact either way. The vote
///   is per warp, so that the skipped rescale is a uniform branch.
/// - kMaxOffset (v12, FlashAttention 3's FP8 max offset): the terms are exp2(x - m + kMaxOffset),
///   2^kMaxOffset times the usual (up to 256 with 8, inside e4m3's 448), so that P's e4m3 values
///   stay normal down to 2^-(6 + kMaxOffset); l carries the same factor, O / l is unchanged, and
///   lse subtracts it (store_rows). Only with exact rescaling (lazy terms may reach 2^8 already).
/// - kMaxFree (v24): the blocks no mask touches take their terms against the running max at once
///   and check the rows' sums instead of taking the block's max first (max_free_block). Lazy
///   rescaling only, every term by the MUFU.
template <int kPolyEvery_, bool kLazyRescale_, int kMaxOffset_ = 0, bool kMaxFree_ = false>
struct SoftmaxOptions {
  static constexpr int kPolyEvery = kPolyEvery_;
  static constexpr bool kLazyRescale = kLazyRescale_;
  static constexpr int kMaxOffset = kMaxOffset_;
  static constexpr bool kMaxFree = kMaxFree_;
  static_assert(kMaxOffset == 0 || !kLazyRescale);
  static_assert(!kMaxFree || (kLazyRescale && kPolyEvery == 0));
};
using ExactSoftmax = SoftmaxOptions<0, false>;

/// Row r's largest score in this lane (of sc[i], sc[i + 1] for i = 2r, 2r + 4, ...), as a tree
/// (device::tree_reduce): log2(kBlockN / 4) deep, where the chain was kBlockN / 8.
template <int kBlockN>
__device__ __forceinline__ float row_max_tree(const float (&sc)[kBlockN / 2], int r) {
  float v[kBlockN / 4];
#pragma unroll
  for (int i = 2 * r; i < kBlockN / 2; i += 4) {
    v[i / 4 * 2] = sc[i];
    v[i / 4 * 2 + 1] = sc[i + 1];
  }
  return device::tree_reduce(v, [](float a, float b) { return fmaxf(a, b); });
}

/// Row r's scores in this lane turned into its terms in place, exp2(s scale - m_use) (every
/// kEvery-th by device::ex2_poly, 0: none), and their sum, in the terms' order.
template <int kBlockN, int kEvery = 0>
__device__ __forceinline__ float row_terms(float (&sc)[kBlockN / 2], int r, float scale_log2,
                                           float m_use) {
  float sum = 0.f;
#pragma unroll
  for (int i = 2 * r; i < kBlockN / 2; i += 4)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int k = (i / 4) * 2 + e;  // the term's place among the row's kBlockN / 4
      bool poly = false;
      if constexpr (kEvery > 0) poly = k % kEvery == kEvery - 1;
      if (poly)
        sc[i + e] = device::ex2_poly(fmaf(sc[i + e], scale_log2, -m_use));
      else
        sc[i + e] = QuadRow::term(sc[i + e], scale_log2, m_use);
      sum += sc[i + e];
    }
  return sum;
}

/// A 64-row accumulator's two rows in this thread (O, or a block's terms) times their alpha.
template <int kN>
__device__ __forceinline__ void scale_rows(float (&acc)[kN / 2], const float (&alpha)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int i = 2 * r; i < kN / 2; i += 4) {
      acc[i] *= alpha[r];
      acc[i + 1] *= alpha[r];
    }
}

/// The online softmax of one key block's scores in place (they become the terms of P); alpha[r]
/// receives the factor exp2(m_old - m_new) that row r's O must be multiplied by. Returns whether
/// O must be rescaled at all (always, unless Opt::kLazyRescale kept every row's max of the warp).
/// Each row's max is a tree (row_max_tree), so that the block's first exponential waits on a
/// short chain (the max is the same in any order). Its sum of terms stays a chain in the terms'
/// order: as a tree it cost v09 1% and the two-consumer kernels 1.5% at D = 64, and spilled at
/// D = 128 (attention.md, "The sum tree apart").
template <int kBlockN, class Opt = ExactSoftmax>
__device__ __forceinline__ bool softmax_block(float (&sc)[kBlockN / 2], QuadRow (&rows)[2],
                                              float scale_log2, float (&alpha)[2]) {
  float mx[2];  // this lane's share of each row's max, then (where it is used) the quad's
#pragma unroll
  for (int r = 0; r < 2; ++r) mx[r] = row_max_tree<kBlockN>(sc, r);
  constexpr int kEvery = Opt::kPolyEvery;
  bool rescale = true;
  if constexpr (Opt::kLazyRescale) {
    // m = -inf (nothing seen yet) grows for any finite score: -inf + 8 stays -inf. A row's m is
    // the same in its quad's four lanes, so the warp's vote over each lane's own max is its vote
    // over the quads' maxima: the shuffles of quad_max wait for a rescale, the rare case.
    const bool grows = mx[0] * scale_log2 > rows[0].m + kLazyRescaleLog2 ||
                       mx[1] * scale_log2 > rows[1].m + kLazyRescaleLog2;
    rescale = __any_sync(0xffffffffu, grows);
  }
  if (rescale) {
#pragma unroll
    for (int r = 0; r < 2; ++r) mx[r] = quad_max(mx[r]);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m_use;
    if (rescale) {
      alpha[r] = rows[r].rescale(mx[r], scale_log2, m_use);
    } else {  // the row keeps its max: its scores lie at most kLazyRescaleLog2 above it
      alpha[r] = 1.f;
      m_use = QuadRow::subtrahend(rows[r].m);
    }
    if constexpr (Opt::kMaxOffset != 0) m_use -= float(Opt::kMaxOffset);
    rows[r].l = rows[r].l * alpha[r] + row_terms<kBlockN, kEvery>(sc, r, scale_log2, m_use);
  }
  return rescale;
}

/// What max_free_block leaves to its caller.
enum class MaxFree {
  kKept,        // every row kept its max: the terms are P's, alpha is 1
  kRescaled,    // some row raised its max: the terms are P's, O takes alpha (scale_rows)
  kScoresLost,  // the scores are gone (a term overflowed, or a row had seen no key yet):
                // recompute_s, then softmax_block
  // Returned by no path since the unseen rows joined the sums' vote again. The caller still tests
  // for it: without that test (one ISETP never true) ptxas lays v25's loop out 8 instructions
  // longer, a form no run has timed, where this one is the build measured on the H200
  // (4b3d578's, attention.md, "The bisect on the H200").
  kUnseen,
};

/// Opt::kMaxFree (v24): the online softmax of a block that no mask touches, with the block's max
/// off the common path. The terms are taken against each row's running max at once (the lazy
/// path's FFMA and MUFU: exp2(s scale - m)) and summed; a lane's row sum of at most
/// kLazyTermBound bounds each of its terms by it (they are not negative), the lazy rescale's own
/// invariant. Where every lane of the warp passes, each row keeps its max, as softmax_block's
/// lazy path does when its vote says so, and the terms, the sum and l are its own bit for bit:
/// the first exponential waits on the S product alone, not on the max tree, the vote and the
/// shuffles. The other cases (rare past a row's first blocks; every branch is warp-uniform):
/// - every row has seen a key and every term is finite: each row raises m by its largest term's
///   exponent (max_free_exponent) and scales its terms, sum, l (and O, by alpha) by the power of
///   two, exactly;
/// - a row has seen no key yet (m = -inf: causal rows whose first visible block this is; their
///   terms were taken against 0 and may have overflowed or underflowed), or a term overflowed
///   (inf: some score lies 2^7 or more above m in log2 units), or a sum is NaN: the scores are
///   gone; the caller computes them again (recompute_s) and runs softmax_block.
/// The unseen rows take no vote of their own: they join the sums' vote. With a vote and a branch
/// of their own before the terms (d82cc53 to 5b8e7e9, so that such a row's softmax_block ran on
/// its intact scores), v25 ran 5% slower at causal D = 128 with the same common path in the SASS
/// (attention.md, "The bisect on the H200").
template <int kBlockN>
__device__ __forceinline__ MaxFree max_free_block(float (&sc)[kBlockN / 2], QuadRow (&rows)[2],
                                                  float scale_log2, float (&alpha)[2]) {
  const bool seen = rows[0].m != -INFINITY && rows[1].m != -INFINITY;
  float sum[2];
#pragma unroll
  for (int r = 0; r < 2; ++r)
    sum[r] = row_terms<kBlockN>(sc, r, scale_log2, QuadRow::subtrahend(rows[r].m));
  if (__all_sync(0xffffffffu, seen && sum[0] <= kLazyTermBound && sum[1] <= kLazyTermBound)) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      alpha[r] = 1.f;
      rows[r].l += sum[r];
    }
    return MaxFree::kKept;
  }
  if (__any_sync(0xffffffffu, !(seen && isfinite(sum[0]) && isfinite(sum[1]))))
    return MaxFree::kScoresLost;
  bool raised = false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float t = quad_max(row_max_tree<kBlockN>(sc, r));  // the row's largest term
    const int e = max_free_exponent(t);
    alpha[r] = max_free_alpha(e);  // 1 where e = 0: the row keeps its max
    rows[r].m += float(e);
    rows[r].l = (rows[r].l + sum[r]) * alpha[r];
    raised |= e != 0;
  }
  scale_rows<kBlockN>(sc, alpha);
  return __any_sync(0xffffffffu, raised) ? MaxFree::kRescaled : MaxFree::kKept;
}

/// S of the block in K/V stage s computed again on the CUDA cores (max_free_block's rare
/// kScoresLost), into the registers wgmma_ss gives it: fp32 products of Q's and K's 16-bit
/// elements from their shared tiles, summed along D in order (not the tensor cores' bits: the
/// same products in fp32, summed within fp32's rounding of them).
template <class C, class T, int kD>
__device__ __forceinline__ void recompute_s(float (&sc)[C::kBlockN / 2], const unsigned char* smem,
                                            int wg_q, int s, int tid) {
  using Tiles = typename C::Tiles;
  static_assert(!kIsFp8<T>);
  // Two elements of a tile, by their place in it (the first of the pair's offset).
  auto pair = [](const unsigned char* tile, uint32_t offset) {
    const uint32_t v = *reinterpret_cast<const uint32_t*>(tile + offset);
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v));
    else
      return __half22float2(*reinterpret_cast<const __half2*>(&v));
  };
#pragma unroll
  for (int i = 0; i < C::kBlockN / 2; ++i) sc[i] = 0.f;
  const unsigned char* const k_tile = smem + Tiles::k_tile(s);
#pragma unroll 1
  for (int d = 0; d < kD; d += 2) {
    float2 q[2];  // this thread's two rows (registers 0 and 2), elements d and d + 1
#pragma unroll
    for (int r = 0; r < 2; ++r)
      q[r] = pair(smem, Tiles::Q::offset(64 * wg_q + device::wgmma_acc_coord(tid, 2 * r).row, d));
#pragma unroll
    for (int i = 0; i < C::kBlockN / 2; i += 4)
#pragma unroll
      for (int e = 0; e < 2; ++e) {  // the key of registers i + e and i + 2 + e
        const float2 k =
            pair(k_tile, Tiles::KV::offset(device::wgmma_acc_coord(tid, i + e).col, d));
#pragma unroll
        for (int r = 0; r < 2; ++r)
          sc[i + 2 * r + e] = fmaf(q[r].y, k.y, fmaf(q[r].x, k.x, sc[i + 2 * r + e]));
      }
  }
}

/// P rounded into the register A operand of P V (e4m3: four terms a register, in place,
/// fa3_fp8.hpp's p8_source).
template <int kBlockN, class T>
__device__ __forceinline__ void p_registers(const float (&sc)[kBlockN / 2],
                                            uint32_t (&pa)[kPSteps<T, kBlockN>][4]) {
  if constexpr (kIsFp8<T>) {
#pragma unroll
    for (int ks = 0; ks < kBlockN / 32; ++ks)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        pa[ks][j] = device::pack_e4m3x4(sc[p8_source(ks, j, 0)], sc[p8_source(ks, j, 1)],
                                        sc[p8_source(ks, j, 2)], sc[p8_source(ks, j, 3)]);
  } else {
#pragma unroll
    for (int ks = 0; ks < kBlockN / 16; ++ks)
      p_operand<kBlockN>(sc, ks, pa[ks], [](float x, float y) { return device::pack2<T>(x, y); });
  }
}

/// The epilogue's first half, both forms': the rows' sums over their 4 lanes, each row's lse
/// (less lse_offset: v12's max offset, in natural-log units) stored, and inv[r] the factor of
/// its O: 1 / l (0 for an empty row) times o_scale (v12: V's scale).
__device__ __forceinline__ void finish_rows(const QuadRow (&rows)[2], const ConsumerThread& th,
                                            const TileOf& t, float* __restrict__ lse,
                                            const Geometry& g, float o_scale, float lse_offset,
                                            float (&inv)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const QuadRow::Final f = rows[r].finish();
    inv[r] = f.inv * o_scale;
    if (th.quad == 0 && th.row[r] < g.nq)
      lse[(int64_t(t.bi) * g.hq + t.h) * g.nq + th.row[r]] = f.lse - lse_offset;
  }
}

/// Epilogue: finish_rows, then O / l (times o_scale) stored from the registers, a 4-byte pair at a
/// time.
template <class T, int kD>
__device__ __forceinline__ void store_rows(const float (&acc)[kD / 2], const QuadRow (&rows)[2],
                                           const ConsumerThread& th, const TileOf& t,
                                           T* __restrict__ o, float* __restrict__ lse,
                                           const Geometry& g, float o_scale = 1.f,
                                           float lse_offset = 0.f) {
  float inv[2];
  finish_rows(rows, th, t, lse, g, o_scale, lse_offset, inv);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (th.row[r] >= g.nq) continue;
    T* dst = o + ((int64_t(t.bi) * g.nq + th.row[r]) * g.hq + t.h) * kD;
#pragma unroll
    for (int i = 2 * r; i < kD / 2; i += 4)
      *reinterpret_cast<uint32_t*>(dst + device::wgmma_acc_coord(th.tid, i).col) =
          device::pack2<T>(acc[i] * inv[r], acc[i + 1] * inv[r]);
  }
}

/// v16's epilogue: finish_rows, then O / l rounded into the warpgroup's
/// own 64 rows of the Q tile (o_stage_offset: the layout the TMA brought Q in, 128-byte swizzled
/// panels), then, once every thread of the warpgroup has stored and fenced its part for the async
/// proxy, one thread stores the kD / 64 panels by TMA (o_map: O's tensor map in boxes of 64
/// rows; rows past nq are not written) and waits until they are read out of shared memory
/// before the block may exit. The warpgroup's S products are all done, and no other reads its
/// rows of Q. One 64-row box a panel instead of kD / 2 4-byte global stores a thread at 7.6
/// sectors a request (v07 at causal 4k, Nsight).
template <class C, class T, int kD, bool kPerTileOffsets = false>
__device__ __forceinline__ void store_rows_tma(const float (&acc)[kD / 2], const QuadRow (&rows)[2],
                                               const ConsumerThread& th, const TileOf& t, int wg,
                                               unsigned char* smem, const CUtensorMap* o_map,
                                               float* __restrict__ lse, const Geometry& g) {
  using Q = typename C::Tiles::Q;
  float inv[2];
  finish_rows(rows, th, t, lse, g, 1.f, 0.f, inv);
  // In a loop over tiles (v17, v18) the compiler hoisted the kD / 4 staging offsets out of it and
  // held them in registers across every tile's rounds, spilling 13 of them (2026-12-04_bb65605's
  // profile); from an opaque copy of the thread index they are computed here, per tile.
  const int tid = kPerTileOffsets ? device::opaque(th.tid) : th.tid;
#pragma unroll
  for (int i = 0; i < kD / 2; i += 2) {
    const uint32_t w = device::pack2<T>(acc[i] * inv[(i / 2) % 2], acc[i + 1] * inv[(i / 2) % 2]);
    *reinterpret_cast<uint32_t*>(smem + o_stage_offset<C::kBlockM, kD>(wg, tid, i)) = w;
  }
  device::fence_proxy_async_shared();
  device::named_barrier_sync(o_ready_id(wg), device::kWarpgroupThreads);
  if (th.tid == 0) {
#pragma unroll
    for (int p = 0; p < Q::kPanels; ++p)
      device::tma_store_4d(o_map, p * kPanelCols, t.h, int(t.n0) + 64 * wg, t.bi,
                           smem + p * Q::kPanelBytes + uint32_t(64 * wg) * kRowBytes);
    device::bulk_commit_group();
    device::bulk_wait_group_read<0>();
  }
}

/// An FA3 block's setup and role split, 3 warpgroups (2 consumers, then the producer): the
/// shared tiles and barriers, then produce(smem, bars) on the producer's one thread (after
/// setmaxnreg_dec) and consume(smem, bars, wg) on each consumer warpgroup (after setmaxnreg_inc).
/// kQHalves (v18): the Q halves' barriers initialised too.
template <class C, bool kQHalves = false, class Produce, class Consume>
__device__ __forceinline__ void split_roles(Produce&& produce, Consume&& consume) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // Q, then the K and V slots
  const Barriers<C::kStages> bars(smem + C::Tiles::kBytes);
  if (threadIdx.x == 0) {
    bars.init(C::kConsumerWarps);
    if constexpr (kQHalves) bars.init_q_halves(C::kConsumerWarps / C::kConsumerWarpgroups);
  }
  __syncthreads();

  const int wg = device::warpgroup_index();
  if (wg == C::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every load
    device::setmaxnreg_dec<C::kProducerRegs>();
    if (threadIdx.x == C::kConsumers) produce(smem, bars);
  } else {
    device::setmaxnreg_inc<C::kConsumerRegs>();
    consume(smem, bars, wg);
  }
}

/// The body of a one-tile FA3 block whose tile is tile() (called after setmaxnreg, in each
/// role). consume(smem, bars, tile, wg) is the rung's consumer loop.
template <class C, class TileFn, class Consume>
__device__ __forceinline__ void run_block_on(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                             const CUtensorMap* v_map, TileFn&& tile,
                                             Consume&& consume) {
  split_roles<C>(
      [&](unsigned char* smem, const Barriers<C::kStages>& bars) {
        produce<C>(q_map, k_map, v_map, smem, bars, tile());
      },
      [&](unsigned char* smem, const Barriers<C::kStages>& bars, int wg) {
        consume(smem, bars, tile(), wg);
      });
}

/// The body of a one-tile FA3 block (x, y, z) = (query tile, query head, batch).
template <class C, class Consume>
__device__ __forceinline__ void run_block(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                          const CUtensorMap* v_map, const Geometry& g,
                                          Consume&& consume) {
  run_block_on<C>(
      q_map, k_map, v_map, [&] { return tile_of<C::kBlockM, C::kBlockN>(g); }, consume);
}

/// The tile of a one-tile block under `line`'s order (v20: a ShortFirstLine): the block's linear
/// index in the grid (x fastest, the order the blocks are dispatched in) taken as its place on
/// the line.
template <int kBlockM, int kBlockN, class Line>
__device__ __forceinline__ TileOf tile_on_line(const Geometry& g, const Line& line) {
  const int64_t t =
      blockIdx.x + int64_t(gridDim.x) * (blockIdx.y + int64_t(gridDim.y) * blockIdx.z);
  const TileLine::Tile at = line.at(t);
  return tile_at<kBlockM, kBlockN>(g, at.m_tile, at.h, at.bi);
}

/// An FA3 rung's kernel on configuration C (Rung::Config<kD>, or at a non-causal problem
/// Rung::NonCausalConfig<kD> where the rung has one): Rung provides kName, the configurations
/// and consume<C, T, kD>(smem, bars, tile, wg, o, lse, geometry), its consumer warpgroups' loop.
template <class Rung, class C, class T, int kD>
__global__ void __launch_bounds__(C::kThreads, 1)
    kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
           const __grid_constant__ CUtensorMap v_map, OutputOf<T>* __restrict__ o,
           float* __restrict__ lse, Geometry g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  run_block<C>(&q_map, &k_map, &v_map, g,
               [&](unsigned char* smem, const Barriers<C::kStages>& bars, const TileOf& t, int wg) {
                 Rung::template consume<C, T, kD>(smem, bars, t, wg, o, lse, g);
               });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// The 4-D tensor map of a (B, N, H, D) tensor of `type` in boxes of 128 bytes x `rows` tokens
/// (token_map), 128-byte swizzle.
inline CUtensorMap token_tensor_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                                    int64_t b, int64_t n, int64_t h, int64_t d, int rows) {
  const TokenMap m = token_map(b, n, h, d, rows, elem_bytes);
  return device::tensor_map_4d(base, type, m.dims, m.strides, m.box, CU_TENSOR_MAP_SWIZZLE_128B);
}
template <class T>
CUtensorMap token_tensor_map(const T* base, int64_t b, int64_t n, int64_t h, int64_t d, int rows) {
  return token_tensor_map(base, device::tma_data_type<T>(), int(sizeof(T)), b, n, h, d, rows);
}

/// Q's, K's and V's tensor maps for tiles C (built once, in prepare).
struct TensorMaps {
  CUtensorMap q, k, v;
};
template <class C, class T>
TensorMaps tensor_maps(const char* name, const Tensors<T>& t, const Dims& s, int64_t batch) {
  KLAB_CHECK(t.vec16(), std::string(name) + ": Q, K, V and O must be 16-byte aligned (TMA)");
  constexpr int kD = C::Tiles::Q::kPanels * kPanelCols;
  return {token_tensor_map(t.q, batch, s.nq, s.hq, kD, C::kBlockM),
          token_tensor_map(t.k, batch, s.nkv, s.hkv, kD, C::kBlockN),
          token_tensor_map(t.v, batch, s.nkv, s.hkv, kD, C::kBlockN)};
}
/// O's tensor map for store_rows_tma (v16, v17): one box a consumer warpgroup's 64 rows.
template <class C, class T>
CUtensorMap o_store_map(const Tensors<T>& t, const Dims& s, int64_t batch) {
  constexpr int kD = C::Tiles::Q::kPanels * kPanelCols;
  return token_tensor_map(t.o, batch, s.nq, s.hq, kD, 64);
}

/// Q's tensor map for load_q_half (v18): one box a consumer warpgroup's 64 rows.
template <class C, class T>
CUtensorMap q_half_map(const Tensors<T>& t, const Dims& s, int64_t batch) {
  constexpr int kD = C::Tiles::Q::kPanels * kPanelCols;
  return token_tensor_map(t.q, batch, s.nq, s.hq, kD, 64);
}

/// The enqueue-only launch of a one-tile-a-block kernel on configuration C (a block a query
/// tile: tiled_grid) with arguments `args`: its shared-memory opt-in done once.
template <class C, auto kKernel, class... Args>
PreparedLaunch prepare_tiled_kernel(const Geometry& g, int64_t batch, Args... args) {
  device::opt_in_dynamic_smem<kKernel>(C::kSmemBytes);
  const dim3 grid = tiled_grid(g, batch, C::kBlockM);
  return PreparedLaunch([=](Stream stream) {
    kKernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(args...);
    KLAB_CHECK_LAUNCH();
  });
}

/// The line of problem s with tiles C on this device: sections in 1 / l2_share of its L2 (half:
/// the persistent rungs' order and v20's; an eighth: v21's).
template <class C>
TileLine line_of(const Dims& s, int64_t elem_bytes, int l2_share = 2) {
  const int64_t m_tiles = (s.nq + C::kBlockM - 1) / C::kBlockM;
  const int64_t budget = device_info().l2_bytes / l2_share;
  return {m_tiles, s.hq, s.b, section_pairs(budget, s.nkv, s.d, elem_bytes, s.group(), s.hq * s.b)};
}

/// The enqueue-only launch of Rung's kernel on configuration C: its tensor maps built and its
/// shared-memory opt-in done once.
template <class Rung, class C, class T, int kD>
PreparedLaunch prepare_config(const Dims& s, const Geometry& g, int64_t batch,
                              const Tensors<T>& t) {
  const TensorMaps m = tensor_maps<C>(Rung::kName, t, s, batch);
  return prepare_tiled_kernel<C, fa3::kernel<Rung, C, T, kD>>(g, batch, m.q, m.k, m.v, t.o, t.lse,
                                                              g);
}

/// Rung's configuration at non-causal problems: its NonCausalConfig<kD> where it has one (v11),
/// else its Config<kD>.
template <class Rung, int kD>
concept HasNonCausalConfig = requires {
  typename Rung::template NonCausalConfig<kD>;
};
template <class Rung, int kD, bool = HasNonCausalConfig<Rung, kD>>
struct NonCausalConfigOf {
  using type = typename Rung::template Config<kD>;
};
template <class Rung, int kD>
struct NonCausalConfigOf<Rung, kD, true> {
  using type = typename Rung::template NonCausalConfig<kD>;
};

/// Rung's enqueue-only launch for problem p on buffers b.
template <class Rung>
PreparedLaunch prepare(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return dispatch_tiled(
      Rung::kName, p, b,
      [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using Causal = typename Rung::template Config<kD>;
        using NonCausal = typename NonCausalConfigOf<Rung, kD>::type;
        return g.causal ? prepare_config<Rung, Causal, T, kD>(s, g, batch, t)
                        : prepare_config<Rung, NonCausal, T, kD>(s, g, batch, t);
      });
}

/// What an FA3 rung refuses (name: its messages' prefix): the tiled rungs' limits, misaligned
/// bases, coordinates and strides the TMA cannot express.
inline Status can_implement(const std::string& name, const Problem& p) {
  const Dims s = dims_of(p);
  if (Status st = tiled_limits(name, s); !st.ok()) return st;
  if (p.misalign % 8 != 0)
    return Status::no(name + ": the TMA needs 16-byte aligned Q, K, V (misaligned base)");
  // TMA coordinates and the consumers' 32-bit rows and keys, a tile past the end included.
  if (s.nq > INT_MAX - 256 || s.nkv > INT_MAX - 256)
    return Status::no(name + ": nq or nkv above 2^31 - 257 (TMA coordinates, 32-bit rows)");
  // The tensor maps' batch strides (N H D elements) must stay below 2^40 bytes.
  if (std::max(s.nq * s.hq, s.nkv * s.hkv) * s.d * 2 >= (int64_t(1) << 40))
    return Status::no(name + ": a batch of Q, K or V spans 2^40 bytes (TMA stride limit)");
  return Status::yes();
}

/// Rung's variant: bf16 and f16 on sm_90a, its launch and prepare step prepare<Rung>.
template <class Rung>
Variant variant(std::string id, std::string summary) {
  Variant v = tiled_variant<prepare<Rung>>(std::move(id), std::move(summary), 90);
  v.can_implement = [](const Problem& p) { return can_implement(Rung::kName, p); };
  return v;
}

}  // namespace klab::attention::fa3

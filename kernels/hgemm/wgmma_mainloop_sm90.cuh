#pragma once
// The pieces the wgmma rungs of hgemm (v10-v15; sm_90a) share: the tensor maps and the TMA
// loads that fill one WgmmaStage (wgmma_stage_sm90.hpp), the wgmma of one k-tile over it, the
// stores of the accumulators to C (masked from registers, or through shared memory and the TMA),
// and the launch with its element-copy fallback.
// Out-of-range box elements (M, N or K edges) arrive as zeros and still count towards a stage's
// transaction bytes, so the main loop has no edge case; only the register stores are masked (the
// TMA clips its stores at C's edges).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/hgemm/multistage_sm80.cuh"
#include "kernels/hgemm/tune.hpp"
#include "kernels/hgemm/wgmma_stage_sm90.hpp"
#include "kernels/hgemm/wgmma_store_sm90.hpp"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/stmatrix_sm90.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/wgmma_fragment.hpp"
#include "klab/device/warpgroup_sm90.cuh"
#include "klab/device/wgmma_sm90.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::hgemm {

/// The two tensor maps of a WgmmaStage: A as (k inner, m outer) in boxes of (64, kBlockM), B as
/// (n inner, k outer) in boxes of (64, 64), both 128-byte swizzled (needs g.vec16()).
struct WgmmaMaps {
  CUtensorMap a, b;
};

/// C as (n inner, m outer) in StmatrixStoreBox boxes of (64, rows), 128-byte swizzled (needs
/// g.vec16()): what the TMA-store epilogues write through (store_wgmma_tile_tma's 64-row boxes,
/// v19's store_swap_ab_tma's of its tokens).
template <class T>
CUtensorMap make_wgmma_c_map(const GemmArgs<T>& g, int rows = WgmmaStoreBox::kRows) {
  return device::tensor_map_2d(g.c, device::tma_data_type<T>(), uint64_t(g.n), uint64_t(g.m),
                               uint64_t(g.n) * sizeof(T), WgmmaStoreBox::kCols, uint32_t(rows),
                               CU_TENSOR_MAP_SWIZZLE_128B);
}

/// A as (k inner, m outer) in boxes of (64, rows), 128-byte swizzled (needs g.vec16()).
template <class T>
CUtensorMap make_a_map(const GemmArgs<T>& g, int rows) {
  return device::tensor_map_2d(g.a, device::tma_data_type<T>(), uint64_t(g.k), uint64_t(g.m),
                               uint64_t(g.k) * sizeof(T), 64, uint32_t(rows),
                               CU_TENSOR_MAP_SWIZZLE_128B);
}

/// B as (n inner, k outer) in boxes of (64, box_rows): one 128-byte-swizzled panel of 64 k-rows
/// of 64 columns a box by default (needs g.vec16()), rows g.ldb_or_n() elements apart.
/// `promotion`: what L2 fetches around a miss (256 bytes by default: a row's next panel too,
/// which the prefill rungs' tiles read next). `box_rows` below 64: a part of a panel's k-rows a
/// box, where CTAs of a cluster each send their part of one panel.
template <class T>
CUtensorMap make_b_panel_map(const GemmArgs<T>& g,
                             CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                             uint32_t box_rows = 64) {
  return device::tensor_map_2d(g.b, device::tma_data_type<T>(), uint64_t(g.n), uint64_t(g.k),
                               uint64_t(g.ldb_or_n()) * sizeof(T), 64, box_rows,
                               CU_TENSOR_MAP_SWIZZLE_128B, promotion);
}

template <class Stage, class T>
WgmmaMaps make_wgmma_maps(const GemmArgs<T>& g) {
  static_assert(Stage::kBlockK == 64 && Stage::kPanelCols == 64);
  return {make_a_map(g, Stage::kBlockM), make_b_panel_map(g)};
}

/// Issues (one thread) the boxes of k-tile kt of the (m0, n0) tile into the stage at `stage`
/// (1024-byte aligned: A, then B's panels), completing on `full`.
template <class Stage>
__device__ __forceinline__ void load_wgmma_stage(unsigned char* stage, const CUtensorMap* a_map,
                                                 const CUtensorMap* b_map, int kt, int m0, int n0,
                                                 uint64_t* full) {
  device::mbarrier_arrive_expect_tx(full, Stage::kBytes);
  device::tma_load_2d(stage, a_map, kt * Stage::kBlockK, m0, full);
#pragma unroll
  for (int p = 0; p < Stage::kPanels; ++p)
    device::tma_load_2d(stage + Stage::kBytesA + p * Stage::kPanelBytes, b_map,
                        n0 + p * Stage::kPanelCols, kt * Stage::kBlockK, full);
}

/// load_wgmma_stage in a cluster of kClusterM CTAs along M that share B (the same n0): each CTA
/// loads its own A and every kClusterM-th of B's panels from its rank on (at 128 x 192 tiles,
/// three panels over two CTAs: two and one), multicast to every CTA of the cluster, so the
/// stage's full barrier in each CTA still receives Stage::kBytes (part from its peers' copies,
/// possibly before its own producer's expect_tx: the phase cannot complete before it).
template <class Stage, int kClusterM>
__device__ __forceinline__ void load_wgmma_stage_multicast_b(unsigned char* stage,
                                                             const CUtensorMap* a_map,
                                                             const CUtensorMap* b_map, int kt,
                                                             int m0, int n0, uint64_t* full,
                                                             uint32_t rank) {
  device::mbarrier_arrive_expect_tx(full, Stage::kBytes);
  device::tma_load_2d(stage, a_map, kt * Stage::kBlockK, m0, full);
#pragma unroll
  for (int p = int(rank); p < Stage::kPanels; p += kClusterM) {
    device::tma_load_2d_multicast(stage + Stage::kBytesA + p * Stage::kPanelBytes, b_map,
                                  n0 + p * Stage::kPanelCols, kt * Stage::kBlockK, full,
                                  uint16_t((1u << kClusterM) - 1));
  }
}

/// A producer's k-tiles kt_begin .. kt_end - 1 of the (tile_m, tile_n) tile (one thread): each
/// k-tile's boxes into the next ring slot (slot: where the ring stands, advanced past them) once
/// its consumers have handed it back.
template <class Stage, int kStages>
__device__ __forceinline__ void produce_wgmma_k_tiles(device::RingSlot<kStages>& slot,
                                                      unsigned char* ring, const CUtensorMap* a_map,
                                                      const CUtensorMap* b_map, uint64_t* full,
                                                      uint64_t* empty, int tile_m, int tile_n,
                                                      int kt_begin, int kt_end) {
  for (int kt = kt_begin; kt < kt_end; ++kt, slot = slot.next()) {
    // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
    device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
    load_wgmma_stage<Stage>(ring + slot.index * Stage::kBytes, a_map, b_map, kt,
                            tile_m * Stage::kBlockM, tile_n * Stage::kBlockN, &full[slot.index]);
  }
}

/// A persistent producer's loop (one thread): for each of the scheduler's tiles of this block,
/// every k-tile's boxes into the next ring slot once its consumers have handed it back.
template <class Stage, int kStages, class Scheduler>
__device__ __forceinline__ void produce_wgmma_tiles(const Scheduler& scheduler, unsigned char* ring,
                                                    const CUtensorMap* a_map,
                                                    const CUtensorMap* b_map, uint64_t* full,
                                                    uint64_t* empty, int k) {
  const int k_tiles = (k - 1) / Stage::kBlockK + 1;
  device::RingSlot<kStages> slot;
  scheduler.for_each_tile([&](int tm, int tn) {
    produce_wgmma_k_tiles<Stage>(slot, ring, a_map, b_map, full, empty, tm, tn, 0, k_tiles);
  });
}

/// produce_wgmma_tiles in a cluster of kClusterM CTAs along M that share B (one thread of each
/// CTA): the clusters walk the scheduler's pair tiles (kClusterM tile rows each) persistently;
/// this CTA loads its rank's row of A and its share of B's panels, multicast to the cluster
/// (load_wgmma_stage_multicast_b), into a ring slot once every consumer of the cluster has
/// handed it back. cluster and clusters: this CTA's cluster in the grid and their number
/// (computed before setmaxnreg by the caller).
template <class Stage, int kStages, int kClusterM, class Scheduler>
__device__ __forceinline__ void produce_wgmma_cluster_tiles(
    const Scheduler& scheduler, int cluster, int clusters, unsigned char* ring,
    const CUtensorMap* a_map, const CUtensorMap* b_map, uint64_t* full, uint64_t* empty, int k) {
  const uint32_t rank = device::cluster_ctarank();
  const int k_tiles = (k - 1) / Stage::kBlockK + 1;
  device::RingSlot<kStages> slot;
  scheduler.for_each_tile_of(cluster, clusters, [&](int pm, int tn) {
    const int m0 = (pm * kClusterM + int(rank)) * Stage::kBlockM;
    for (int kt = 0; kt < k_tiles; ++kt, slot = slot.next()) {
      // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
      device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
      load_wgmma_stage_multicast_b<Stage, kClusterM>(ring + slot.index * Stage::kBytes, a_map,
                                                     b_map, kt, m0, tn * Stage::kBlockN,
                                                     &full[slot.index], rank);
    }
  });
}

/// The warpgroup's wgmma over one stage (address `stage`): for each k16 slice and each of kMmas
/// m64 blocks (from A's block m64_first on), acc[i] += A(m64 block) @ B(all kN columns). Between
/// wgmma_fence() and wgmma_commit_group(), which the caller issues.
template <class Stage, class T, int kMmas>
__device__ __forceinline__ void mma_wgmma_stage(float (&acc)[kMmas][Stage::kBlockN / 2],
                                                uint32_t stage, int m64_first) {
  constexpr int kN = Stage::kBlockN;
#pragma unroll
  for (int kk = 0; kk < Stage::kBlockK / 16; ++kk) {
    const uint64_t desc_b = Stage::desc_b(stage + Stage::kBytesA, kk);
#pragma unroll
    for (int i = 0; i < kMmas; ++i)
      device::wgmma_ss<kN, T, /*A K-major*/ 0, /*B MN-major*/ 1>(
          acc[i], Stage::desc_a(stage, m64_first + i, kk), desc_b, true);
  }
}

/// A consumer warpgroup's k-loop over the next k_tiles stages of a ring (slot: where it stands,
/// advanced past them): for each stage, once full, mma(stage index) issues its wgmmas as one
/// group, the previous group still in flight while the next is issued; release(stage index)
/// runs in every thread once the group that read the stage has completed. On return every group
/// has (none when k_tiles is 0: nothing is waited for or released).
template <int kStages, class Mma, class Release>
__device__ __forceinline__ void consume_wgmma_ring(uint64_t* full, device::RingSlot<kStages>& slot,
                                                   int k_tiles, Mma&& mma, Release&& release) {
  device::RingSlot<kStages> prev;
  for (int kt = 0; kt < k_tiles; ++kt) {
    device::mbarrier_wait(&full[slot.index], slot.phase);
    device::wgmma_fence();
    mma(slot.index);
    device::wgmma_commit_group();
    device::wgmma_wait_group<1>();  // k-tile kt - 1's group is done: hand its stage back
    if (kt > 0) release(prev.index);
    prev = slot;
    slot = slot.next();
  }
  device::wgmma_wait_group<0>();
  if (k_tiles > 0) release(prev.index);
}

/// consume_wgmma_ring over a ring of Stage: acc += its kMmas m64 blocks of A (from m64_first) @
/// B for each stage (ring: the stages' shared-memory address).
template <class Stage, class T, int kStages, int kMmas, class Release>
__device__ __forceinline__ void consume_wgmma_stages(float (&acc)[kMmas][Stage::kBlockN / 2],
                                                     uint32_t ring, uint64_t* full,
                                                     device::RingSlot<kStages>& slot, int k_tiles,
                                                     int m64_first, Release&& release) {
  consume_wgmma_ring(
      full, slot, k_tiles,
      [&](int s) { mma_wgmma_stage<Stage, T>(acc, ring + s * Stage::kBytes, m64_first); }, release);
#pragma unroll
  for (int i = 0; i < kMmas; ++i) device::wgmma_fence_operands(acc[i]);
}

/// consume_wgmma_stages handing each stage back with one arrival per warp on its empty barrier.
template <class Stage, class T, int kStages, int kMmas>
__device__ __forceinline__ void consume_wgmma_stages(float (&acc)[kMmas][Stage::kBlockN / 2],
                                                     uint32_t ring, uint64_t* full, uint64_t* empty,
                                                     device::RingSlot<kStages>& slot, int k_tiles,
                                                     int m64_first) {
  const bool lane0 = threadIdx.x % 32 == 0;
  consume_wgmma_stages<Stage, T>(acc, ring, full, slot, k_tiles, m64_first, [&](int s) {
    if (lane0) device::mbarrier_arrive(&empty[s]);
  });
}

/// consume_wgmma_stages in a cluster of kClusterM CTAs that multicast into each other's stages
/// (produce_wgmma_cluster_tiles): lane 0 of each warp hands a stage back to every producer that
/// writes it, its own CTA's and its peers' (each empty barrier counts the cluster's warps).
template <class Stage, class T, int kClusterM, int kStages, int kMmas>
__device__ __forceinline__ void consume_wgmma_cluster_stages(
    float (&acc)[kMmas][Stage::kBlockN / 2], uint32_t ring, uint64_t* full, uint64_t* empty,
    device::RingSlot<kStages>& slot, int k_tiles, int m64_first) {
  const bool lane0 = threadIdx.x % 32 == 0;
  consume_wgmma_stages<Stage, T>(acc, ring, full, slot, k_tiles, m64_first, [&](int s) {
    if (lane0) device::mbarrier_arrive_cluster_ranks<kClusterM>(&empty[s]);
  });
}

/// Two floats rounded once to a pair of T (bf16 or f16).
template <class T>
__device__ __forceinline__ auto round_pair(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __floats2bfloat162_rn(lo, hi);
  else
    return __floats2half2_rn(lo, hi);
}

/// The 32 bits of a pair of 16-bit values, as stmatrix takes them.
template <class T2>
__device__ __forceinline__ uint32_t as_u32(T2 v) {
  static_assert(sizeof(T2) == 4);
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}

/// Stores the warpgroup's 64 x kN accumulators (wgmma_fragment.hpp's layout) to C at (row0,
/// col0) as 2-element vectors, rounding once; rows >= m and columns >= n are skipped (n even:
/// a pair is in or out whole). C's rows must be 4-byte aligned (g.vec16()).
template <class T, int kN>
__device__ __forceinline__ void store_wgmma_tile(const float (&acc)[kN / 2], T* __restrict__ c,
                                                 int m, int n, int row0, int col0) {
  using T2 = std::conditional_t<std::is_same_v<T, __nv_bfloat16>, __nv_bfloat162, __half2>;
  const int t = int(threadIdx.x) % 128;
#pragma unroll
  for (int i = 0; i < kN / 2; i += 2) {
    const device::WgmmaAccCoord at = device::wgmma_acc_coord(t, i);
    const int row = row0 + at.row, col = col0 + at.col;
    if (row < m && col < n)
      *reinterpret_cast<T2*>(c + size_t(row) * size_t(n) + col) = round_pair<T>(acc[i], acc[i + 1]);
  }
}

/// Stores the warpgroup's 64 x kN accumulators to C at (row0, col0) through shared memory and the
/// TMA, as kN / 64 boxes of WgmmaStoreBox: each box is rounded to T, written by stmatrix into one
/// of kSlots box-sized slots at `slots` (1024-byte aligned; box b in slot b % kSlots), made
/// visible to the async proxy, and stored by the warpgroup's thread 0 as one bulk group. The
/// TMA clips rows >= m and columns >= n. A slot is rewritten only after that thread has seen the
/// store that last read it finish reading (wait_group.read: kSlots - 1 younger stores may still
/// run) and named barrier `barrier` (the warpgroup's 128 threads) has passed: the stores of the
/// last kSlots boxes drain while the caller goes on (the next tile's main loop); before the
/// block exits, thread 0 must wait for them (drain_wgmma_tile_stores).
template <class T, int kN, int kSlots>
__device__ __forceinline__ void store_wgmma_tile_tma(const float (&acc)[kN / 2],
                                                     unsigned char* slots, const CUtensorMap* c_map,
                                                     int row0, int col0, int barrier) {
  using Box = WgmmaStoreBox;
  static_assert(kN % Box::kCols == 0 && (kN / Box::kCols) % kSlots == 0,
                "box b of every tile in slot b % kSlots: the slots' order runs on across tiles");
  const int t = device::warpgroup_thread();
#pragma unroll
  for (int b = 0; b < kN / Box::kCols; ++b) {
    unsigned char* slot = slots + (b % kSlots) * Box::kBytes;
    if (t == 0) device::bulk_wait_group_read<kSlots - 1>();  // the slot's previous store read it
    device::named_barrier_sync(barrier, device::kWarpgroupThreads);
    const uint32_t box = device::smem_addr(slot);
#pragma unroll
    for (int q = 0; q < Box::kCols / 16; ++q) {
      const float* d = &acc[b * (Box::kCols / 2) + 8 * q];  // wgmma_stmatrix_row's registers
      device::stmatrix_x4(box + Box::stmatrix_offset(t, q), as_u32(round_pair<T>(d[0], d[1])),
                          as_u32(round_pair<T>(d[2], d[3])), as_u32(round_pair<T>(d[4], d[5])),
                          as_u32(round_pair<T>(d[6], d[7])));
    }
    device::fence_proxy_async_shared();  // this thread's stmatrix, before the TMA reads the box
    device::named_barrier_sync(barrier, device::kWarpgroupThreads);
    if (t == 0) {
      device::tma_store_2d(c_map, col0 + b * Box::kCols, row0, slot);
      device::bulk_commit_group();
    }
  }
}

/// Before a block that stored with store_wgmma_tile_tma exits (every warpgroup thread calls it):
/// its shared memory must outlive the stores' reads.
__device__ __forceinline__ void drain_wgmma_tile_stores() {
  if (device::warpgroup_thread() == 0) device::bulk_wait_group_read<0>();
}

/// v14's shared memory (v14, v18, v21): the ring of Cfg::kStages stages (1024-byte aligned), the
/// consumer warpgroups' Cfg::kStoreSlots store boxes each (Cfg::kStoreBytes in all), then the
/// ring's full and empty barriers.
struct TmaStoreSmem {
  unsigned char* ring;
  unsigned char* store_slots;
  uint64_t* full;
  uint64_t* empty;
};

/// Carves v14's shared memory out of the block's dynamic shared memory and initialises the
/// ring's barriers (full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp).
template <class Cfg>
__device__ __forceinline__ TmaStoreSmem tma_store_smem(unsigned char* smem_raw) {
  TmaStoreSmem s;
  s.ring = device::align_shared<1024>(smem_raw);
  s.store_slots = s.ring + Cfg::kStages * Cfg::Stage::kBytes;
  s.full = reinterpret_cast<uint64_t*>(s.store_slots + Cfg::kStoreBytes);
  s.empty = s.full + Cfg::kStages;
  device::init_ring<Cfg::kStages>(s.full, s.empty, 1, Cfg::kConsumerWarps);
  return s;
}

/// Whether Cfg's kernel stores C through the TMA (Cfg::kTmaStore: it takes C's tensor map, from
/// make_wgmma_c_map, instead of C's pointer; false where it does not say).
template <class Cfg>
constexpr bool wgmma_tma_store() {
  if constexpr (requires { Cfg::kTmaStore; })
    return Cfg::kTmaStore;
  else
    return false;
}

/// Whether Cfg asks for a persistent launch (Cfg::kPersistent; false where it does not say).
template <class Cfg>
constexpr bool wgmma_persistent() {
  if constexpr (requires { Cfg::kPersistent; })
    return Cfg::kPersistent;
  else
    return false;
}

/// The CTAs along M of Cfg's clusters (Cfg::kClusterM; 1 where it does not say).
template <class Cfg>
constexpr int wgmma_cluster_m() {
  if constexpr (requires { Cfg::kClusterM; })
    return Cfg::kClusterM;
  else
    return 1;
}

/// Launches kKernel (a wgmma rung's kernel for element type T) over Cfg::Stage's tiles of g, one
/// block of Cfg::kThreads a tile (Cfg::kPersistent: at most one resident wave, each block
/// looping over tiles; kernels with clusters declare them with __cluster_dims__),
/// Cfg::kSmemBytes of dynamic shared memory. Its arguments: A's and B's tensor maps, then C's
/// tensor map (Cfg::kTmaStore) or C's pointer, then m, n, k.
template <auto kKernel, class Cfg, class T>
void launch_wgmma_kernel(const GemmArgs<T>& g, cudaStream_t stream) {
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  using Stage = typename Cfg::Stage;
  const WgmmaMaps maps = make_wgmma_maps<Stage>(g);
  // Tile rows rounded up to whole clusters (a cluster's CTAs past the last row load zeros and
  // store nothing); a persistent grid of whole clusters.
  constexpr int kCluster = wgmma_cluster_m<Cfg>();
  auto blocks = device::ceil_div(device::ceil_div(g.m, Stage::kBlockM), kCluster) * kCluster *
                device::ceil_div(g.n, Stage::kBlockN);
  if constexpr (wgmma_persistent<Cfg>())
    blocks = std::min<int64_t>(blocks, device::resident_wave(device_info().sm_count, kKernel,
                                                             Cfg::kThreads, Cfg::kSmemBytes) /
                                           kCluster * kCluster);
  if constexpr (wgmma_tma_store<Cfg>())
    kKernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
        maps.a, maps.b, make_wgmma_c_map(g), g.m, g.n, g.k);
  else
    kKernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
        maps.a, maps.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

/// v14's own kernel (v14_wgmma_tma_store.cu; g.vec16()): 128 x block_n tiles (256: the rung's,
/// 192 or 128: v18's unsplit entries), persistent, each stored through stmatrix and the TMA; a
/// ring of v18_stages(block_n) stages.
template <class T>
void launch_v14_kernel(const GemmArgs<T>& g, int block_n, cudaStream_t stream);

/// v14's kernel as v18 generalises it (v18_wgmma_dispatch.cu; g.vec16()): 128 x block_n tiles
/// (256, 192 or 128), K split `splits` ways into persistent (tile, split) units whose fp32
/// partials a second kernel sums in split order (workspace: splits x m x n floats, unused at one
/// split, where each tile is stored through stmatrix and the TMA). Unsplit tiles run v14's own
/// kernel (launch_v14_kernel), which has no split path.
template <class T>
void launch_v14_tiles(const GemmArgs<T>& g, int block_n, int splits, float* workspace,
                      cudaStream_t stream);

/// What the wgmma rungs run where the TMA cannot (k or n not a multiple of 8, unaligned
/// pointers: no 16-byte row pitch): v05's kernel with element copies.
using WgmmaFallback =
    MultistageConfig</*block*/ 128, 256, 64, /*warp*/ 64, 64, /*stages*/ 4, /*blocks/SM*/ 1>;

/// A wgmma rung: Kernels::kernel<T>() is its kernel for element type T, Cfg its tile, threads and
/// shared memory; problems off the 16-byte path run WgmmaFallback.
template <class Cfg, class Kernels>
Variant wgmma_variant(const std::string& rung, const std::string& summary) {
  Variant v = gpu_variant(rung, summary, [](const Problem& p, Buffers& b, const LaunchArgs& args) {
    with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
      if (g.vec16())
        launch_wgmma_kernel<Kernels::template kernel<T>(), Cfg>(g, stream_of(args));
      else
        launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
    });
  });
  v.info.min_sm = 90;
  v.can_implement = [](const Problem& p) {
    return wgmma_rung_can_implement(p, Cfg::Stage::kBlockM, Cfg::Stage::kBlockN, Cfg::kSmemBytes);
  };
  return v;
}

}  // namespace klab::hgemm

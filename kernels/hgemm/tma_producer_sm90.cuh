#pragma once
// The warp-specialised main loop of hgemm v09 (sm_90a), on the pipeline of
// klab/device/pipeline_sm90.cuh: one thread of the producer warpgroup moves the A and B tiles
// with TMA boxes into the ring (the copy engine completes each stage's full barrier with the
// bytes delivered); eight consumer warps only ldmatrix and mma.sync, as in v05 (WarpTile).
// What this removes from v05's consumers: the 12 LDGSTS and their address arithmetic per thread
// and k-tile, the cp.async.wait_group, and the block-wide __syncthreads per k-tile at which all
// eight warps of the SM's only block drain together. A consumer waits only for its stage's bytes.
// Shared-memory layout: TMA's 128-byte swizzle (16-byte chunk j of a 128-byte row r stored at
// chunk j ^ (r % 8), the pattern repeating every 1024 bytes), so a box's inner extent is at most
// 64 bf16 elements: A's (BM, 64) stage is one box; B's (64, BN) stage is BN/64 boxes of (64, 64),
// stored one after the other ("panels"). The swizzle keeps ldmatrix conflict-free, as v05's.
#include <cuda.h>

#include <algorithm>

#include "kernels/hgemm/multistage_sm80.cuh"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

/// (kRows, kCols) tile as kCols/64 panels of (kRows, 64) elements, each row-major with 128-byte
/// rows and the TMA 128-byte swizzle: chunk c of row r at panel c / 8, chunk (c % 8) ^ (r % 8).
/// Answers SwizzledLayout's questions (see tile_sm80.cuh), so WarpTile reads it unchanged; with
/// kCols = 64 it is SwizzledLayout<kRows, 64>.
template <int kRows, int kCols>
struct PanelLayout {
  static constexpr int kPanelCols = 8 * kChunk;  // 64 elements: one 128-byte swizzle span
  static constexpr int kStride = kPanelCols;     // elements between rows of a panel
  static constexpr int kPanelElems = kRows * kPanelCols;
  static constexpr int kPanels = kCols / kPanelCols;
  static constexpr int kElems = kRows * kCols;
  static constexpr int kPeriod = 8;
  static_assert(kCols % kPanelCols == 0 && kRows % 8 == 0);

  __host__ __device__ static int offset(int row, int chunk) {
    return (chunk >> 3) * kPanelElems + row * kStride + ((chunk & 7) ^ (row & 7)) * kChunk;
  }
  __host__ __device__ static LaneFrag lane_frag(int lane) {
    const int r = lane & 15;
    return {r * kStride, (lane >> 4) ^ (r & 7)};
  }
  /// cu a multiple of 8 (a panel's first chunk), cc compile-time: chunk cu + cc + lane / 16.
  __host__ __device__ static int frag_offset(LaneFrag lf, int row0, int cu, int cc) {
    return ((cu + cc) >> 3) * kPanelElems + lf.base + row0 * kStride + ((cc & 7) ^ lf.t) * kChunk;
  }
};

/// kProbe_ (-1: none): the mma step at which a consumer tests, without waiting, whether the next
/// stage has landed; the last step then waits only if the test said no (as sgemm v18).
template <int kBlockM_, int kBlockN_, int kStages_, int kGroupM_, int kProbe_ = -1>
struct TmaProducerConfig : device::WarpSpecialized<(kBlockM_ / 64) * (kBlockN_ / 64)> {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = 64;  // 128-byte rows
  static constexpr int kWarpM = 64, kWarpN = 64;
  static constexpr int kStages = kStages_, kGroupM = kGroupM_, kProbe = kProbe_;
  static constexpr int kSteps = kBlockK / 16;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  using LayoutA = PanelLayout<kBlockM, kBlockK>;
  using LayoutB = PanelLayout<kBlockK, kBlockN>;
  using LayoutC = SwizzledLayout<kBlockM, kBlockN>;  // the staged epilogue, as v05's
  template <class T>
  static constexpr int kStageBytes = (LayoutA::kElems + LayoutB::kElems) * int(sizeof(T));
  template <class T>
  static constexpr int kRingBytes = std::max(kStages* kStageBytes<T>,
                                             LayoutC::kElems* int(sizeof(T)));
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  template <class T>
  static constexpr int kSmemBytes = 1024 + kRingBytes<T> + 2 * kStages * 8;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0 && kStages >= 2);
};

/// One block: C[m0.., n0..] = A[m0.., :] @ B[:, n0..] for the tile picked by grouped
/// rasterization. a_map: A as (k inner, m outer), boxes of (64, BM); b_map: B as (n inner,
/// k outer), boxes of (64, 64); both 128-byte swizzled. Out-of-range box elements arrive as zeros.
template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    tma_producer_kernel(const __grid_constant__ CUtensorMap a_map,
                        const __grid_constant__ CUtensorMap b_map, T* __restrict__ c, int m, int n,
                        int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // setmaxnreg is sm_90a-only
  using LayoutA = typename Cfg::LayoutA;
  using LayoutB = typename Cfg::LayoutB;
  using LayoutC = typename Cfg::LayoutC;
  constexpr int kStages = Cfg::kStages, kSteps = Cfg::kSteps;
  constexpr uint32_t kStageBytesA = LayoutA::kElems * sizeof(T),
                     kStageBytesB = LayoutB::kElems * sizeof(T);
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // TMA boxes, 128-byte swizzle
  T* sA = reinterpret_cast<T*>(smem);                          // kStages x (BM, 64)
  T* sB = sA + kStages * LayoutA::kElems;                      // kStages x BN/64 panels of (64, 64)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + Cfg::template kRingBytes<T>);
  uint64_t* empty = full + kStages;

  // full: the producer's arrive_expect_tx; empty: every consumer thread.
  device::init_ring<kStages>(full, empty, 1, Cfg::kConsumers);

  // Everything below is computed after setmaxnreg: ptxas keeps values that live across it in
  // local memory (an LDL per use in the loop otherwise).
  auto tile_origin = [&](int& m0, int& n0) {
    const auto [tm, tn] = device::grouped_tile_order<int>(
        blockIdx.x, Cfg::kGroupM, (m - 1) / Cfg::kBlockM + 1, (n - 1) / Cfg::kBlockN + 1);
    m0 = tm * Cfg::kBlockM;
    n0 = tn * Cfg::kBlockN;
  };
  const int warp = threadIdx.x / 32;
  if (warp >= Cfg::kConsumerWarps) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers) {
      int m0, n0;
      tile_origin(m0, n0);
      device::produce_ring<kStages>((k - 1) / Cfg::kBlockK + 1, empty, [&](int kt, int s) {
        device::mbarrier_arrive_expect_tx(&full[s], Cfg::template kStageBytes<T>);
        device::tma_load_2d(sA + s * LayoutA::kElems, &a_map, kt * Cfg::kBlockK, m0, &full[s]);
#pragma unroll
        for (int p = 0; p < LayoutB::kPanels; ++p)
          device::tma_load_2d(sB + s * LayoutB::kElems + p * LayoutB::kPanelElems, &b_map,
                              n0 + p * LayoutB::kPanelCols, kt * Cfg::kBlockK, &full[s]);
      });
    }
    return;  // the consumers synchronise among themselves from here on (named barrier 1)
  }

  // The consumers: v05's warp tile and fragment double buffering, stage by stage.
  device::setmaxnreg_inc<Cfg::kConsumerRegs>();
  const int tid = threadIdx.x, lane = tid % 32;
  int m0, n0;
  tile_origin(m0, n0);
  const int k_tiles = (k - 1) / Cfg::kBlockK + 1;
  using Warp = WarpTile<T, Cfg::kWarpM, Cfg::kWarpN>;
  Warp acc;
  acc.zero();
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;
  const int row0 = warp_m * Cfg::kWarpM, chunk0 = warp_n * Cfg::kWarpN / kChunk;
  const LaneFrag fa = LayoutA::lane_frag(lane), fb = LayoutB::lane_frag(lane);
  const uint32_t sA_addr = device::smem_addr(sA), sB_addr = device::smem_addr(sB);
  typename Warp::Frags frags[2];
  device::consume_ring<kStages, kSteps, Cfg::kProbe>(
      k_tiles, full, empty,
      [&](int stage, int step, int buf) {
        Warp::template load_frags<LayoutA, LayoutB>(frags[buf], sA_addr + stage * kStageBytesA,
                                                    sB_addr + stage * kStageBytesB, fa, fb, row0,
                                                    chunk0, step);
      },
      [&](int buf) { acc.mma(frags[buf]); });

  // Epilogue, as v05's: stage C through shared memory (it reuses the ring: every box has landed
  // and been read once all consumers pass the barrier), then 16-byte coalesced row stores.
  device::named_barrier_sync(1, Cfg::kConsumers);
  T* sC = reinterpret_cast<T*>(smem);
  acc.template stage<LayoutC>(sC, row0, chunk0, lane);
  device::named_barrier_sync(1, Cfg::kConsumers);
  store_tile16<T, Cfg::kBlockM, Cfg::kBlockN, Cfg::kConsumers, LayoutC>(sC, c, m, n, m0, n0, tid);
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

/// Launches tma_producer_kernel<Cfg, T> (needs g.vec16(): TMA wants 16-byte row pitches).
template <class Cfg, class T>
void launch_tma_producer(const GemmArgs<T>& g, cudaStream_t stream) {
  constexpr auto kernel = tma_producer_kernel<Cfg, T>;
  constexpr int kSmem = Cfg::template kSmemBytes<T>;
  static const bool opted_in = [] {
    KLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    return true;
  }();
  (void)opted_in;
  const CUtensorMap a_map = device::tensor_map_2d(
      g.a, device::tma_data_type<T>(), uint64_t(g.k), uint64_t(g.m), uint64_t(g.k) * sizeof(T),
      Cfg::LayoutA::kPanelCols, Cfg::kBlockM, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = device::tensor_map_2d(
      g.b, device::tma_data_type<T>(), uint64_t(g.n), uint64_t(g.k), uint64_t(g.n) * sizeof(T),
      Cfg::LayoutB::kPanelCols, Cfg::kBlockK, CU_TENSOR_MAP_SWIZZLE_128B);
  const auto blocks = device::ceil_div(g.m, Cfg::kBlockM) * device::ceil_div(g.n, Cfg::kBlockN);
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, kSmem, stream>>>(a_map, b_map, g.c, g.m,
                                                                          g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

/// Runs Cfg on the 16-byte path; other problems (k or n not a multiple of 8, unaligned pointers:
/// no TMA row pitch) take Fallback's element-copy multistage kernel.
template <class Cfg, class Fallback>
void launch_tma_producer_or_fallback(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (g.vec16())
      launch_tma_producer<Cfg, T>(g, stream_of(args));
    else
      launch_multistage<Fallback, T, false>(g, stream_of(args));
  });
}

}  // namespace klab::hgemm

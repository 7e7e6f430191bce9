#pragma once
// The cp.async multistage mainloop of the tuned hgemm rungs (v05, v06), parameterised by tile
// shape, stage count and blocks per SM, so that each rung is a configuration plus its comment.
// Schedule (the CUTLASS sm80 multistage one, as v04, with three changes):
// - the refill of one stage is spread over the first kSteps-1 mma steps of a tile (a slice of the
//   A and B copy passes per step) instead of a burst at step 0, so LDGSTS interleave with HMMA;
// - no fragment load past the last tile (v04 read a stale slot there);
// - on the vector path the epilogue goes through shared memory (WarpTile::stage, then
//   store_tile16): 16-byte coalesced stores of whole C rows instead of 4-byte fragment stores.
// Persistent (v08, kPersistent): one resident wave of blocks, each computing every gridDim.x-th
// tile. The k loop runs over the block's tiles back to back (one flattened sequence of k-tiles),
// so the copies of the next tile's first k-tiles are in flight while the current tile finishes,
// and the epilogue stores fragments straight from registers (no barrier, no staging in the
// shared memory the next tile's stages occupy) while the next tile's mma steps run.
#include "kernels/hgemm/rung.cuh"
#include "kernels/hgemm/tile_sm80.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::hgemm {

template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpM_, int kWarpN_, int kStages_,
          int kMinBlocks_, int kGroupM_ = 8, bool kPersistent_ = false>
struct MultistageConfig {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kWarpM = kWarpM_, kWarpN = kWarpN_;
  static constexpr int kStages = kStages_, kMinBlocks = kMinBlocks_, kGroupM = kGroupM_;
  static constexpr bool kPersistent = kPersistent_;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
  static constexpr int kSteps = kBlockK / 16;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0 && kBlockK % 16 == 0);
  static_assert(kSteps >= 2,
                "the refill is issued in steps 0 .. kSteps-2, before the barrier of step kSteps-1");
  static_assert(kStages >= 2);

  using LayoutA = SwizzledLayout<kBlockM, kBlockK>;  // (BM, BK) of A, per stage
  using LayoutB = SwizzledLayout<kBlockK, kBlockN>;  // (BK, BN) of B, per stage
  using LayoutC = SwizzledLayout<kBlockM, kBlockN>;  // (BM, BN) of C, the staged epilogue
  template <class T>
  static constexpr int kMainBytes = kStages*(LayoutA::kElems + LayoutB::kElems) *
                                    static_cast<int>(sizeof(T));
  template <class T>
  static constexpr int kEpilogueBytes = LayoutC::kElems* static_cast<int>(sizeof(T));
  template <class T>
  static constexpr int kSmemBytes =
      kMainBytes<T> > kEpilogueBytes<T> ? kMainBytes<T> : kEpilogueBytes<T>;
};

/// The whole block: C[m0.., n0..] = A[m0.., :] @ B[:, n0..] for the tile picked by grouped
/// rasterization; persistent, for every gridDim.x-th tile from blockIdx.x in turn.
template <class Cfg, class T, bool kVec>
__device__ __forceinline__ void multistage_gemm(const T* __restrict__ a, const T* __restrict__ b,
                                                T* __restrict__ c, int m, int n, int k,
                                                unsigned char* smem) {
  using LayoutA = typename Cfg::LayoutA;
  using LayoutB = typename Cfg::LayoutB;
  using LayoutC = typename Cfg::LayoutC;
  constexpr int kStages = Cfg::kStages, kSteps = Cfg::kSteps, kThreads = Cfg::kThreads;
  T* sA = reinterpret_cast<T*>(smem);      // kStages x (BM, BK)
  T* sB = sA + kStages * LayoutA::kElems;  // kStages x (BK, BN)
  constexpr Copy kCopy = kVec ? Copy::async16 : Copy::scalar;
  constexpr uint32_t kStageBytesA = LayoutA::kElems * sizeof(T),
                     kStageBytesB = LayoutB::kElems * sizeof(T);

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int tiles_m = (m - 1) / Cfg::kBlockM + 1, tiles_n = (n - 1) / Cfg::kBlockN + 1;
  // This block's tiles: number j is tile blockIdx.x + j * gridDim.x (one tile unless persistent).
  const int my_tiles =
      Cfg::kPersistent ? (tiles_m * tiles_n - 1 - static_cast<int>(blockIdx.x)) / gridDim.x + 1 : 1;
  auto origin = [&](int j, int& m0, int& n0) {
    const auto [tm, tn] =
        device::grouped_tile_order<int>(blockIdx.x + j * gridDim.x, Cfg::kGroupM, tiles_m, tiles_n);
    m0 = tm * Cfg::kBlockM;
    n0 = tn * Cfg::kBlockN;
  };
  int m0, n0;
  origin(0, m0, n0);
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;

  using CopierA = TileCopier<T, Cfg::kBlockM, Cfg::kBlockK, kThreads, LayoutA, false>;
  using CopierB = TileCopier<T, Cfg::kBlockK, Cfg::kBlockN, kThreads, LayoutB, true>;
  CopierA gA(a, m, k, k, m0, 0, tid);
  CopierB gB(b, k, n, n, 0, n0, tid);
  using Warp = WarpTile<T, Cfg::kWarpM, Cfg::kWarpN>;
  Warp acc;
  acc.zero();
  const LaneFrag fa = LayoutA::lane_frag(lane), fb = LayoutB::lane_frag(lane);
  const uint32_t sA_addr = device::smem_addr(sA), sB_addr = device::smem_addr(sB);
  const int k_tiles = (k - 1) / Cfg::kBlockK + 1;
  const int total = my_tiles * k_tiles;  // k-tiles this block consumes, tile after tile

  // The copiers' next k-tile; past a tile's last one, the first k-tile of the block's next tile.
  int load_kt = 0, load_tile = 0;
  auto next_load = [&] {
    gA.advance();
    gB.advance();
    if constexpr (Cfg::kPersistent) {
      if (++load_kt == k_tiles && load_tile + 1 < my_tiles) {
        load_kt = 0;
        int m1, n1;
        origin(++load_tile, m1, n1);
        gA = CopierA(a, m, k, k, m1, 0, tid);
        gB = CopierB(b, k, n, n, 0, n1, tid);
      }
    }
  };

  // Prologue: k-tiles 0 .. kStages-2 in flight, one commit group each (empty past the last one).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < total) {
      gA.template copy<kCopy>(sA + s * LayoutA::kElems);
      gB.template copy<kCopy>(sB + s * LayoutB::kElems);
      next_load();
    }
    device::cp_async_commit();
  }

  // Main loop. Step ks of k-tile it: (last step only) wait for k-tile it+1 and barrier; ldmatrix
  // the fragments of the next step; issue slice ks of the refill (k-tile it+kStages-1 into the
  // slot k-tile it-1 used: every warp passed the previous barrier after its last read of it) and,
  // at step kSteps-2, commit it; then the mma of step ks. Group count at the wait of k-tile it:
  // (kStages-1) + (it+1) committed, so "at most kStages-2 pending" means k-tile it+1 has landed.
  constexpr int kIssueSteps = kSteps - 1;
  const int row0 = warp_m * Cfg::kWarpM, chunk0 = warp_n * Cfg::kWarpN / kChunk;
  typename Warp::Frags frags[2];
  int read = 0, write = kStages - 1;
  int kt = 0, tile = 0;  // the k-tile being consumed: k-tile kt of this block's tile number `tile`
  device::cp_async_wait<kStages - 2>();
  __syncthreads();
  Warp::template load_frags<LayoutA, LayoutB>(frags[0], sA_addr, sB_addr, fa, fb, row0, chunk0, 0);

  for (int it = 0; it < total; ++it) {
    const bool refill = it + kStages - 1 < total;
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks == kSteps - 1) {
        device::cp_async_wait<kStages - 2>();
        __syncthreads();
        read = read == kStages - 1 ? 0 : read + 1;
      }
      if (ks + 1 < kSteps || it + 1 < total)
        Warp::template load_frags<LayoutA, LayoutB>(
            frags[(ks + 1) % 2], sA_addr + read * kStageBytesA, sB_addr + read * kStageBytesB, fa,
            fb, row0, chunk0, (ks + 1) % kSteps);
      if (ks < kIssueSteps) {
        if (refill) {
          gA.template copy<kCopy>(sA + write * LayoutA::kElems, ks * CopierA::kPasses / kIssueSteps,
                                  (ks + 1) * CopierA::kPasses / kIssueSteps);
          gB.template copy<kCopy>(sB + write * LayoutB::kElems, ks * CopierB::kPasses / kIssueSteps,
                                  (ks + 1) * CopierB::kPasses / kIssueSteps);
          if (ks == kIssueSteps - 1) next_load();
        }
        if (ks == kIssueSteps - 1) {
          device::cp_async_commit();
          write = write == kStages - 1 ? 0 : write + 1;
        }
      }
      acc.mma(frags[ks % 2]);
    }
    if constexpr (Cfg::kPersistent) {
      if (++kt == k_tiles) {  // the tile is done: store it from registers, start the next one
        int cm0, cn0;
        origin(tile++, cm0, cn0);
        acc.template store<kVec>(c, m, n, cm0 + row0, cn0 + warp_n * Cfg::kWarpN, lane);
        acc.zero();
        kt = 0;
      }
    }
  }

  if constexpr (Cfg::kPersistent) {
    device::cp_async_wait<0>();  // only empty groups can be pending; leave none behind
  } else if constexpr (kVec) {
    // Only empty groups can still be pending, but wait anyway: the C tile reuses the stages.
    device::cp_async_wait<0>();
    __syncthreads();  // every warp is done with its last ldmatrix
    T* sC = reinterpret_cast<T*>(smem);
    acc.template stage<LayoutC>(sC, row0, chunk0, lane);
    __syncthreads();
    store_tile16<T, Cfg::kBlockM, Cfg::kBlockN, kThreads, LayoutC>(sC, c, m, n, m0, n0, tid);
  } else {
    acc.template store<false>(c, m, n, m0 + row0, n0 + warp_n * Cfg::kWarpN, lane);
  }
}

/// The __global__ entry of a multistage rung (the configuration names it in profiles).
template <class Cfg, class T, bool kVec>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    multistage_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m,
                      int n, int k) {
  extern __shared__ __align__(128) unsigned char smem[];
  multistage_gemm<Cfg, T, kVec>(a, b, c, m, n, k, smem);
}

/// Launches multistage_kernel<Cfg, T, kVec> (the cp.async path when g.vec16()), opting in to its
/// dynamic shared memory and to the max-shared carveout (kMinBlocks blocks per SM) once per kernel.
template <class Cfg, class T, bool kVec>
void launch_multistage(const GemmArgs<T>& g, cudaStream_t stream) {
  constexpr auto kernel = multistage_kernel<Cfg, T, kVec>;
  static const bool opted_in = [] {
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Cfg::template kSmemBytes<T>));
    KLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)opted_in;
  auto blocks = device::ceil_div(g.m, Cfg::kBlockM) * device::ceil_div(g.n, Cfg::kBlockN);
  if constexpr (Cfg::kPersistent)  // one resident wave, each block looping over tiles
    blocks = std::min<int64_t>(blocks,
                               device::resident_wave(device_info().sm_count, kernel, Cfg::kThreads,
                                                     Cfg::template kSmemBytes<T>));
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::template kSmemBytes<T>, stream>>>(
      g.a, g.b, g.c, g.m, g.n, g.k);
  KLAB_CHECK_LAUNCH();
}

/// can_implement of a multistage rung: the 1-D grid of tiles must fit an int.
template <class Cfg>
Status multistage_can_implement(const Problem& p) {
  if (device::ceil_div(p.dim("m"), Cfg::kBlockM) * device::ceil_div(p.dim("n"), Cfg::kBlockN) >
      INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  return Status::yes();
}

/// A rung running configuration Cfg (v05, v06): the 16-byte cp.async path when the problem
/// allows it, element copies otherwise.
template <class Cfg>
Variant multistage_variant(const std::string& rung, const std::string& summary) {
  Variant v = gpu_variant(rung, summary, [](const Problem& p, Buffers& b, const LaunchArgs& args) {
    with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
      if (g.vec16())
        launch_multistage<Cfg, T, true>(g, stream_of(args));
      else
        launch_multistage<Cfg, T, false>(g, stream_of(args));
    });
  });
  v.can_implement = multistage_can_implement<Cfg>;
  return v;
}

}  // namespace klab::hgemm

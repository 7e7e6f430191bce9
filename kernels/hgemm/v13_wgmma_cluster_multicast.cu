// v13 wgmma_cluster_multicast (sm_90a): v12's persistent producer/consumer kernel in clusters of
// two CTAs along M that share their tile's B: the pair computes tiles (2 pm, tn) and (2 pm + 1,
// tn), each CTA's producer loads its own A box and half of B's panels, multicast by the TMA
// into both CTAs' stages. A stage is refilled only when the consumers of both CTAs have handed
// it back: each consumer warp arrives on its own CTA's empty barrier and on its peer's
// (klab/device/cluster_sm90.cuh), so every empty barrier counts 16 warps. The clusters walk the
// pair tiles persistently (grouped order, 8 pair rows a group).
// Why: in v12 every CTA reads its 128 x 64 A box and its 64 x 256 B boxes from L2 on its own:
// 48 KiB a k-tile, of which B (32 KiB) is the same for the CTAs of one tile column. Multicast
// reads each B box once per pair: L2-to-SM traffic per k-tile drops from 96 to 64 KiB for the
// pair, a third less, which leaves more of L2's bandwidth for the loads that are left and
// shortens the wait for a stage when the ring runs dry.
// Expected bottleneck: as v12's (the epilogue stops both consumers); the pair now also waits for
// the slower of its two CTAs at every stage.
// Prediction (written before it ran): 2-6% above v12 at 4096^3 and 8192^3 bf16.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA multicast, clusters), 193 KiB of dynamic shared
// memory; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; other
// problems run v05's kernel with element copies.
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V13Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 256>;
  static constexpr int kStages = 4, kGroupM = 8;  // kGroupM: pair tile rows a group
  static constexpr bool kPersistent = true;       // one resident wave (launch_wgmma_kernel)
  static constexpr int kClusterM = 2;             // CTAs along M sharing B (__cluster_dims__)
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = 1024 + kStages * int(Stage::kBytes) + 2 * kStages * 8;
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
};

template <class Cfg, class T>
__global__ void __cluster_dims__(Cfg::kClusterM, 1, 1) __launch_bounds__(Cfg::kThreads, 1)
    wgmma_cluster_kernel(const __grid_constant__ CUtensorMap a_map,
                         const __grid_constant__ CUtensorMap b_map, T* __restrict__ c, int m, int n,
                         int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (A, B panels)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp of the cluster.
  device::init_ring<kStages>(full, empty, 1, Cfg::kClusterM * Cfg::kConsumerWarps);
  device::cluster_sync();  // every CTA's barriers are set up before a peer multicasts or arrives

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory. The
  // scheduler's tiles are pair tiles (kClusterM tile rows); a CTA takes its rank's row of each.
  auto scheduler = [&] {
    return device::StaticTileScheduler<Cfg::kGroupM>{
        ((m - 1) / Stage::kBlockM) / Cfg::kClusterM + 1, (n - 1) / Stage::kBlockN + 1};
  };
  const int cluster = int(blockIdx.x) / Cfg::kClusterM, clusters = int(gridDim.x) / Cfg::kClusterM;
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers)
      produce_wgmma_cluster_tiles<Stage, kStages, Cfg::kClusterM>(
          scheduler(), cluster, clusters, smem, &a_map, &b_map, full, empty, k);
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each of its CTA's tiles
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const uint32_t rank = device::cluster_ctarank();
    const int k_tiles = (k - 1) / Stage::kBlockK + 1;
    device::RingSlot<kStages> slot;
    scheduler().for_each_tile_of(cluster, clusters, [&](int pm, int tn) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_cluster_stages<Stage, T, Cfg::kClusterM>(acc, device::smem_addr(smem), full,
                                                             empty, slot, k_tiles, wg);
      store_wgmma_tile<T, kN>(acc[0], c, m, n,
                              (pm * Cfg::kClusterM + int(rank)) * Stage::kBlockM + 64 * wg,
                              tn * Stage::kBlockN);
    });
  }
  device::cluster_sync();  // no CTA exits while a peer may still arrive on its barriers
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

struct V13Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_cluster_kernel<V13Config, T>;
  }
};

}  // namespace

Variant gpu_v13_wgmma_cluster_multicast() {
  return wgmma_variant<V13Config, V13Kernels>(
      "v13_wgmma_cluster_multicast",
      "v12 in clusters of 2 CTAs along M, B's boxes multicast by the TMA to both, stages handed "
      "back to both producers");
}

void launch_v13(const Problem& p, Buffers& b, const LaunchArgs& args) {
  static const Variant v13 = gpu_v13_wgmma_cluster_multicast();
  v13.launch(p, b, args);
}

}  // namespace klab::hgemm

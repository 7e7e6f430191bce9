// v15 wgmma_cluster_tma_store (sm_90a): v14's kernel (persistent producer, two m64n256k16
// consumer warpgroups, C stored box by box through stmatrix and the TMA) in v13's clusters of two
// CTAs along M that share their tile's B: each producer loads its own A box and half of B's
// panels, multicast into both CTAs' stages, and a stage is refilled only when the consumer warps
// of both CTAs have handed it back (every empty barrier counts 16 warps). The one change against
// v14 is the cluster: the producer's loop and the consumers' release are v13's
// (produce_wgmma_cluster_tiles, consume_wgmma_cluster_stages), the epilogue is v14's
// (store_wgmma_tile_tma), and before a CTA exits its stores drain and the cluster meets at a
// barrier (a peer may still arrive on its empty barriers).
// Why: the two gains came from different places: multicast cuts the L2-to-SM traffic of a pair
// by a third and was the large win at the ragged 6000x7000x5000 and at some Qwen3 shapes, where
// v14's overlapped stores did not help; v14's epilogue won at the square shapes and gate_up.
// Neither needs the other's resources: clusters add no shared memory, so v14's layout (the
// 4-stage ring, two 8 KiB box slots per consumer warpgroup, the barriers: 225 KiB of 227) stays.
// Expected bottleneck: the pair waits for the slower of its two CTAs at every stage, and the
// conversion and stmatrix of each box still stop the math of both consumers.
// Prediction (written before it ran; bf16, v13's and v14's gains over v12 multiplied, both from
// 2026-12-02_af25cfd_hopper_v14): 6000x7000x5000 590-630 TFLOP/s, 4096^3 750-775, 8192^3
// 770-810 (v13 was below v12 there in that run), down_proj (K 12288) 780-800.
// Measured (2026-12-02_9c2ca7a, ac8ef08): below v14 at most shapes, above it at 8192^3 and the
// ragged shape; docs/worklogs/gemm.md.
// v18's entries 15 and 16 run this kernel on 128 x 128 and 128 x 192 tiles (V15Config<kBlockN>:
// v18's ring depth and store slots for the width, 5 stages at 128 (29e7427's 6 measured no
// better), three slots at 192, where B's three panels split two and one between the pair); the
// rung itself is the 256-wide form above.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA loads with multicast and stores, stmatrix,
// clusters), 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0, n % 8 == 0 and
// 16-byte aligned pointers (C's too); other problems run v05's kernel with element copies.
#include "kernels/hgemm/tune.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

/// v15's kernel on 128 x kBlockN tiles (256: the rung; 192 and 128: v18's entries for grids of
/// few tiles) with v18's ring depth and store slots for that width (tune.hpp).
template <int kBlockN>
struct V15Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, kBlockN>;
  static constexpr int kStages = v18_stages(kBlockN), kGroupM = 8;  // kGroupM: pair tile rows
  static constexpr bool kPersistent = true;  // one resident wave (launch_wgmma_kernel)
  static constexpr bool kTmaStore = true;    // takes C's tensor map (launch_wgmma_kernel)
  static constexpr int kClusterM = 2;        // CTAs along M sharing B (__cluster_dims__)
  static constexpr int kStoreSlots = v18_store_slots(kBlockN);  // per consumer warpgroup
  static constexpr int kStoreBytes = kConsumerWarps / 4 * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// v14's layout: the ring (1024-byte aligned: up to 1023 bytes lost aligning the base), the
  /// store slots, then the barriers.
  static constexpr int kSmemBytes =
      1024 + kStages * int(Stage::kBytes) + kStoreBytes + 2 * kStages * 8;
  static_assert(kSmemBytes == v18_smem_bytes(kBlockN), "tune.hpp's count, which v18 checks");
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
  static_assert(kSmemBytes + 1024 <= 227 * 1024, "an H100/H200 block's shared memory");
};

template <class Cfg, class T>
__global__ void __cluster_dims__(Cfg::kClusterM, 1, 1) __launch_bounds__(Cfg::kThreads, 1)
    wgmma_cluster_tma_store_kernel(const __grid_constant__ CUtensorMap a_map,
                                   const __grid_constant__ CUtensorMap b_map,
                                   const __grid_constant__ CUtensorMap c_map, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN, kClusterM = Cfg::kClusterM;
  extern __shared__ unsigned char smem_raw[];
  // kStages x (A, B panels), then kStoreSlots boxes per consumer warpgroup, all 1024-aligned.
  unsigned char* smem = device::align_shared<1024>(smem_raw);
  unsigned char* store_slots = smem + kStages * Stage::kBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(store_slots + Cfg::kStoreBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp of the cluster.
  device::init_ring<kStages>(full, empty, 1, kClusterM * Cfg::kConsumerWarps);
  device::cluster_sync();  // every CTA's barriers are set up before a peer multicasts or arrives

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory. The
  // scheduler's tiles are pair tiles (kClusterM tile rows); a CTA takes its rank's row of each.
  auto scheduler = [&] {
    return device::StaticTileScheduler<Cfg::kGroupM>{((m - 1) / Stage::kBlockM) / kClusterM + 1,
                                                     (n - 1) / Stage::kBlockN + 1};
  };
  const int cluster = int(blockIdx.x) / kClusterM, clusters = int(gridDim.x) / kClusterM;
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers)
      produce_wgmma_cluster_tiles<Stage, kStages, kClusterM>(scheduler(), cluster, clusters, smem,
                                                             &a_map, &b_map, full, empty, k);
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each of its CTA's tiles
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const uint32_t rank = device::cluster_ctarank();
    const int k_tiles = (k - 1) / Stage::kBlockK + 1;
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    device::RingSlot<kStages> slot;
    scheduler().for_each_tile_of(cluster, clusters, [&](int pm, int tn) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_cluster_stages<Stage, T, kClusterM>(acc, device::smem_addr(smem), full, empty,
                                                        slot, k_tiles, wg);
      // A pair tile's row past M (the last, when the tile rows are odd) is clipped by the TMA.
      store_wgmma_tile_tma<T, kN, Cfg::kStoreSlots>(
          acc[0], my_slots, &c_map, (pm * kClusterM + int(rank)) * Stage::kBlockM + 64 * wg,
          tn * Stage::kBlockN, /*named barrier*/ 1 + wg);
    });
    drain_wgmma_tile_stores();
  }
  device::cluster_sync();  // no CTA exits while a peer may still arrive on its barriers
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <int kBlockN>
struct V15Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_cluster_tma_store_kernel<V15Config<kBlockN>, T>;
  }
};

template <int kBlockN>
Variant v15_variant() {
  return wgmma_variant<V15Config<kBlockN>, V15Kernels<kBlockN>>(
      "v15_wgmma_cluster_tma_store",
      "v14's TMA-store epilogue in v13's 2-CTA clusters: B multicast to both CTAs of a pair, "
      "stages handed back to both producers, C through stmatrix box slots and TMA stores");
}

}  // namespace

Variant gpu_v15_wgmma_cluster_tma_store() { return v15_variant<256>(); }

void launch_v15(int block_n, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(block_n == 256 || block_n == 192 || block_n == 128,
             "v15's kernel runs 128 x 256, 128 x 192 or 128 x 128 tiles, not 128 x " +
                 std::to_string(block_n));
  static const Variant v15[] = {v15_variant<256>(), v15_variant<192>(), v15_variant<128>()};
  v15[block_n == 256 ? 0 : block_n == 192 ? 1 : 2].launch(p, b, args);
}

}  // namespace klab::hgemm

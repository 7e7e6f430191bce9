// v12 wgmma_persistent (sm_90a): v11's producer and two m64n256k16 consumer warpgroups, as one
// resident wave of blocks (one per SM) that each walk their tiles (klab/device/tile_scheduler.cuh:
// tiles blockIdx.x, blockIdx.x + gridDim.x, ..., in the grouped order of 16 tile rows). The ring
// runs on across tiles: the producer fills the next tile's stages while the consumers finish the
// current one and store it (every stage, the last included, goes back through its empty barrier).
// Why: in v11 a block's producer has nothing to do once its tile's last boxes are issued, and a new
// block starts only when the old one has stored C and exited: its prologue (barrier setup, the
// first stages' latency) and the epilogue's stores leave the tensor pipe idle at every tile
// boundary. Here the next tile's first kStages loads are in flight during the stores.
// Expected bottleneck: the epilogue still stops both consumers together (the math waits for the
// stores), and 512 tiles on 132 SMs at 4096^3 leave a partial last round (3.9 tiles a block).
// Prediction (written before it ran): 3-8% above v11 at 4096^3 bf16, and more at shapes with
// few k-tiles per tile, where the prologue is a larger share.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA), 193 KiB of dynamic shared memory; the TMA path
// needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel
// with element copies.
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V12Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 256>;
  static constexpr int kStages = 4, kGroupM = 16;
  static constexpr bool kPersistent = true;  // one resident wave (launch_wgmma_kernel)
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = 1024 + kStages * int(Stage::kBytes) + 2 * kStages * 8;
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_persistent_kernel(const __grid_constant__ CUtensorMap a_map,
                            const __grid_constant__ CUtensorMap b_map, T* __restrict__ c, int m,
                            int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (A, B panels)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp.
  device::init_ring<kStages>(full, empty, 1, Cfg::kConsumerWarps);

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory.
  auto scheduler = [&] {
    return device::StaticTileScheduler<Cfg::kGroupM>{(m - 1) / Stage::kBlockM + 1,
                                                     (n - 1) / Stage::kBlockN + 1};
  };
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers) {
      const int k_tiles = (k - 1) / Stage::kBlockK + 1;
      device::RingSlot<kStages> slot;
      scheduler().for_each_tile([&](int tm, int tn) {
        for (int kt = 0; kt < k_tiles; ++kt, slot = slot.next()) {
          // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
          device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
          load_wgmma_stage<Stage>(smem + slot.index * Stage::kBytes, &a_map, &b_map, kt,
                                  tm * Stage::kBlockM, tn * Stage::kBlockN, &full[slot.index]);
        }
      });
    }
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int k_tiles = (k - 1) / Stage::kBlockK + 1;
    device::RingSlot<kStages> slot;
    scheduler().for_each_tile([&](int tm, int tn) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot, k_tiles, wg);
      store_wgmma_tile<T, kN>(acc[0], c, m, n, tm * Stage::kBlockM + 64 * wg, tn * Stage::kBlockN);
    });
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

struct V12Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_persistent_kernel<V12Config, T>;
  }
};

}  // namespace

Variant gpu_v12_wgmma_persistent() {
  return wgmma_variant<V12Config, V12Kernels>(
      "v12_wgmma_persistent",
      "v11 as one resident wave of blocks walking grouped tiles, the producer loading the "
      "next tile's stages during the current tile's stores");
}

void launch_v12(const Problem& p, Buffers& b, const LaunchArgs& args) {
  static const Variant v12 = gpu_v12_wgmma_persistent();
  v12.launch(p, b, args);
}

}  // namespace klab::hgemm

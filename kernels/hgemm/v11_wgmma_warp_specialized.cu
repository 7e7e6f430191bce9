// v11 wgmma_warp_specialized (sm_90a): v10's wgmma on TMA boxes, split into a producer
// warpgroup and two consumer warpgroups. The producer drops to 40 registers (setmaxnreg) and
// one of its threads issues every box into a 4-stage ring of 48 KiB stages (the pipeline of
// klab/device/pipeline_sm90.cuh, as v09's); the two consumers take the freed registers (232)
// and each computes 64 rows x 256 columns of a 128x256 tile with m64n256k16, the widest wgmma,
// releasing a stage (one arrival per warp on its empty mbarrier) once the wgmma group that read
// it has completed. No __syncthreads in the k-loop; one block per SM.
// Why: in v10 the one warpgroup that issues the wgmma also waits for the boxes and issues them,
// and each m64n128 wgmma reads 16 KiB of B for 64 rows of A. Here the math warps only wait on
// full barriers that the producer filled stages ahead, and the N = 256 instruction reads B once
// for twice the work (B's shared-memory traffic per flop halves). fast.cu's kernels 4-5 step.
// Expected bottleneck: the epilogue (2-element stores straight from registers while the SM's
// only block has no main loop to overlap with) and the tile's wave quantisation at 4096^3
// (512 tiles on 132 SMs: 3.9 waves).
// Prediction (written before it ran): 560-650 TFLOP/s at 4096^3 bf16 (0.72-0.85x cuBLASLt's
// ~750-800), above v09's and v10's.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA), 193 KiB of dynamic shared memory; the TMA path
// needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel
// with element copies.
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_order.hpp"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V11Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 256>;
  static constexpr int kStages = 4, kGroupM = 16;
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = 1024 + kStages * int(Stage::kBytes) + 2 * kStages * 8;
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap a_map,
                    const __grid_constant__ CUtensorMap b_map, T* __restrict__ c, int m, int n,
                    int k) {
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
  auto tile_origin = [&](int& m0, int& n0) {
    const auto [tm, tn] = device::grouped_tile_order<int>(
        blockIdx.x, Cfg::kGroupM, (m - 1) / Stage::kBlockM + 1, (n - 1) / Stage::kBlockN + 1);
    m0 = tm * Stage::kBlockM;
    n0 = tn * Stage::kBlockN;
  };
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers) {
      int m0, n0;
      tile_origin(m0, n0);
      device::produce_ring<kStages>((k - 1) / Stage::kBlockK + 1, empty, [&](int kt, int s) {
        load_wgmma_stage<Stage>(smem + s * Stage::kBytes, &a_map, &b_map, kt, m0, n0, &full[s]);
      });
    }
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of the tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    int m0, n0;
    tile_origin(m0, n0);
    float acc[1][kN / 2];
#pragma unroll
    for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
    device::RingSlot<kStages> slot;
    consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                   (k - 1) / Stage::kBlockK + 1, wg);
    store_wgmma_tile<T, kN>(acc[0], c, m, n, m0 + 64 * wg, n0);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

struct V11Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_ws_kernel<V11Config, T>;
  }
};

}  // namespace

Variant gpu_v11_wgmma_warp_specialized() {
  return wgmma_variant<V11Config, V11Kernels>(
      "v11_wgmma_warp_specialized",
      "a TMA producer warpgroup and two consumer warpgroups of m64n256k16 "
      "wgmma (setmaxnreg 40/232), 128x256 block, 4-stage mbarrier ring");
}

}  // namespace klab::hgemm

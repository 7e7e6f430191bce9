// v10 wgmma_tma (sm_90a): Hopper's warpgroup mma, fed by TMA. One warpgroup (128 threads) per
// block computes a 128x128 tile as two m64n128k16 wgmma per k16 slice, both operands read by
// the tensor cores straight from the TMA's 128-byte-swizzled boxes (A K-major, B MN-major: the
// "transposed B" descriptor of wgmma_stage_sm90.hpp). A 3-stage ring of 32 KiB stages with
// full/empty mbarriers; thread 0 issues the boxes inside the loop, refilling a stage as soon as
// every warp's wgmma group that read it has completed (wgmma_wait_group<1>: one k-tile's group
// stays in flight while the next is issued). Two blocks per SM.
// Why: v09 is bound by the mma.sync issue rate (its top stalls are the HMMA issue itself), and
// its eight warps still ldmatrix every fragment into registers. wgmma is Hopper's full-rate
// tensor path: one instruction does a 64x128x16 block from shared memory, so the issue slots,
// the fragment loads and most registers go away. Single warpgroup first, no warp
// specialisation: the rung isolates what the instruction alone gives.
// Expected bottleneck: each block's only warpgroup waits for a stage's bytes and for its own
// previous wgmma group, and stores C straight from registers (2-element stores); the second
// block per SM fills some of those gaps.
// Prediction (written before it ran): 420-500 TFLOP/s at 4096^3 bf16 (0.55-0.65x cuBLASLt's
// ~750-800), below v09 or level with it: the tensor pipe runs in bursts between waits.
// Requirements: sm_90a (wgmma, TMA, mbarrier transaction counts), 97 KiB of dynamic shared
// memory a block; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; other
// problems run v05's kernel with element copies.
#include <algorithm>

#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_order.hpp"

namespace klab::hgemm {

namespace {

struct V10Config {
  using Stage = WgmmaStage</*block*/ 128, 128>;
  static constexpr int kThreads = 128, kStages = 3, kGroupM = 16, kMinBlocks = 2;
  static constexpr int kMmas = Stage::kBlockM / 64;  // m64 blocks of the warpgroup
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers.
  static constexpr int kSmemBytes = 1024 + kStages * int(Stage::kBytes) + 2 * kStages * 8;
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap a_map,
                     const __grid_constant__ CUtensorMap b_map, T* __restrict__ c, int m, int n,
                     int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma is sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (A, B panels)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: thread 0's arrive_expect_tx; empty: lane 0 of each warp, once its wgmma read the stage.
  device::init_ring<kStages>(full, empty, 1, Cfg::kThreads / 32);

  const auto [tm, tn] = device::grouped_tile_order<int>(
      blockIdx.x, Cfg::kGroupM, (m - 1) / Stage::kBlockM + 1, (n - 1) / Stage::kBlockN + 1);
  const int m0 = tm * Stage::kBlockM, n0 = tn * Stage::kBlockN;
  const int k_tiles = (k - 1) / Stage::kBlockK + 1;
  const bool issuer = threadIdx.x == 0, lane0 = threadIdx.x % 32 == 0;
  auto fill = [&](int kt, int s) {
    load_wgmma_stage<Stage>(smem + s * Stage::kBytes, &a_map, &b_map, kt, m0, n0, &full[s]);
  };
  if (issuer)
    for (int kt = 0; kt < std::min(kStages, k_tiles); ++kt) fill(kt, kt);

  float acc[Cfg::kMmas][kN / 2];
#pragma unroll
  for (int i = 0; i < Cfg::kMmas; ++i)
#pragma unroll
    for (int j = 0; j < kN / 2; ++j) acc[i][j] = 0.f;

  const uint32_t ring = device::smem_addr(smem);
  device::RingSlot<kStages> slot, prev;
  for (int kt = 0; kt < k_tiles; ++kt) {
    device::mbarrier_wait(&full[slot.index], slot.phase);
    device::wgmma_fence();
    mma_wgmma_stage<Stage, T>(acc, ring + slot.index * Stage::kBytes, 0);
    device::wgmma_commit_group();
    device::wgmma_wait_group<1>();  // k-tile kt - 1's group is done: its stage is free
    if (kt > 0) {
      if (lane0) device::mbarrier_arrive(&empty[prev.index]);
      if (issuer && kt - 1 + kStages < k_tiles) {
        device::mbarrier_wait(&empty[prev.index], prev.phase);
        fill(kt - 1 + kStages, prev.index);
      }
    }
    prev = slot;
    slot = slot.next();
  }
  device::wgmma_wait_group<0>();
#pragma unroll
  for (int i = 0; i < Cfg::kMmas; ++i) {
    device::wgmma_fence_operands(acc[i]);
    store_wgmma_tile<T, kN>(acc[i], c, m, n, m0 + 64 * i, n0);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

struct V10Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_tma_kernel<V10Config, T>;
  }
};

}  // namespace

Variant gpu_v10_wgmma_tma() {
  return wgmma_variant<V10Config, V10Kernels>(
      "v10_wgmma_tma",
      "one warpgroup's m64n128k16 wgmma on TMA boxes (A K-major, B MN-major), "
      "128x128 block, 3-stage mbarrier ring, 2 blocks/SM");
}

}  // namespace klab::hgemm

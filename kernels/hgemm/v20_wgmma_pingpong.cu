// v20 wgmma_pingpong (sm_90a): v14's persistent producer, ring and TMA-store epilogue with the
// two consumer warpgroups in ping-pong instead of cooperating on one tile. v14's warpgroups split
// every 128 x 256 tile (64 rows each), so they reach the epilogue together and the tensor cores
// idle while both round, stmatrix and store. Here each warpgroup owns whole 128 x 128 tiles
// (two m64n128k16 wgmmas a k16 slice, 128 accumulators a thread, as v14's one m64n256): of a
// CTA's tiles in the scheduler's order, warpgroup 0 takes the even ones and warpgroup 1 the odd
// ones. The producer fills the ring tile after tile, so a warpgroup's next tile only starts
// landing once the other's tile is nearly issued: while one warpgroup stores its tile, the other
// runs its main loop. A warpgroup skips the other's stages by advancing its ring position
// (RingSlot::advance) and hands back only its own: each empty barrier counts the 4 warps of one
// warpgroup. As in CUTLASS's ping-pong kernel, an ordered pair of mbarriers makes a warpgroup
// wait, before its tile's main loop, until the other has finished the main loop of the tile
// before: the main loops take turns, and it is also what keeps the parity waits sound. A full
// barrier's parity only tells its current phase from the one before, so a warpgroup that jumped
// k-tiles ahead must not wait on a stage whose previous occupant has not landed yet; once the
// other warpgroup's main loop is over, every stage of that tile has.
// Why: cooperative (v14) against ping-pong is the choice CUTLASS's Hopper kernels offer; the
// epilogue of a 128 x 256 tile is 16 stmatrix and four box stores a thread with two warpgroup
// barriers each, which ping-pong hides behind the other warpgroup's math.
// The cost: a 128 x 128 tile reads 32 KiB a k-tile for half the flops of v14's 48 KiB (a third
// more L2-to-shared traffic per flop), and an m64n128 wgmma reads A's shared memory twice as
// often per flop as an m64n256 (A's 64 x 16 slice serves half the columns).
// Prediction (written before it ran; bf16, cuBLASLt ~750-780 TFLOP/s at 4096^3): 4096^3
// 700-770 TFLOP/s (0.93-1.02x v14: the hidden epilogue, ~2% of a tile, against the narrower
// wgmma and the extra traffic); 8192^3 the same ratio to v14.
// Measured: docs/worklogs/gemm.md.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA loads and stores, stmatrix), 225 KiB of dynamic
// shared memory; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers (C's
// too); other problems run v05's kernel with element copies.
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V20Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 128>;      // one warpgroup's tile
  static constexpr int kMmas = Stage::kBlockM / 64;  // m64 blocks a warpgroup's tile
  static constexpr int kWarpgroups = kConsumerWarps / 4;
  static constexpr int kStages = 6, kGroupM = 16;
  static constexpr bool kPersistent = true;  // one resident wave (launch_wgmma_kernel)
  static constexpr bool kTmaStore = true;    // takes C's tensor map (launch_wgmma_kernel)
  static constexpr int kStoreSlots = 2;      // WgmmaStoreBox slots per consumer warpgroup
  static constexpr int kStoreBytes = kWarpgroups * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), the store slots,
  /// then the ring's barriers and the warpgroups' order barriers.
  static constexpr int kSmemBytes =
      1024 + kStages * int(Stage::kBytes) + kStoreBytes + (2 * kStages + kWarpgroups) * 8;
  static_assert(kSmemBytes + 1024 <= 227 * 1024, "with the kernel's static shared memory");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_pingpong_kernel(const __grid_constant__ CUtensorMap a_map,
                          const __grid_constant__ CUtensorMap b_map,
                          const __grid_constant__ CUtensorMap c_map, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  // kStages x (A, B panels), then kStoreSlots boxes per consumer warpgroup, all 1024-aligned.
  unsigned char* smem = device::align_shared<1024>(smem_raw);
  unsigned char* store_slots = smem + kStages * Stage::kBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(store_slots + Cfg::kStoreBytes);
  uint64_t* empty = full + kStages;
  // order[w]: warpgroup w may start its next tile's main loop (the other's 128 threads arrive
  // when theirs is over).
  uint64_t* order = empty + kStages;
  if (threadIdx.x == 0)
    for (int w = 0; w < Cfg::kWarpgroups; ++w) device::mbarrier_init(&order[w], 128);
  // full: the producer's arrive_expect_tx; empty: lane 0 of each warp of the one consumer
  // warpgroup that reads the stage. (init_ring's fence and __syncthreads publish order too.)
  device::init_ring<kStages>(full, empty, 1, 4);

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory.
  auto scheduler = [&] {
    return device::StaticTileScheduler<Cfg::kGroupM>{(m - 1) / Stage::kBlockM + 1,
                                                     (n - 1) / Stage::kBlockN + 1};
  };
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kWarpgroups) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers)
      produce_wgmma_tiles<Stage, kStages>(scheduler(), smem, &a_map, &b_map, full, empty, k);
  } else {  // a consumer warpgroup: every kWarpgroups-th of this CTA's tiles, from the wg-th
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int k_tiles = (k - 1) / Stage::kBlockK + 1;
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    static_assert(Cfg::kWarpgroups == 2, "turns alternate between two warpgroups");
    device::RingSlot<kStages> slot;
    int turn = 0;   // this CTA's tiles so far
    int waits = 0;  // this warpgroup's waits on order[wg]: the parity of the next
    scheduler().for_each_tile([&](int tm, int tn) {
      const int me = turn++;
      if (me % 2 != wg) {  // the other warpgroup's tile: skip its stages
        slot = slot.advance(k_tiles);
        return;
      }
      // The other warpgroup's main loop of tile me - 1 is over: every stage it read has landed.
      if (me > 0) device::mbarrier_wait(&order[wg], uint32_t(waits++ & 1));
      float acc[Cfg::kMmas][kN / 2];
#pragma unroll
      for (int i = 0; i < Cfg::kMmas; ++i)
#pragma unroll
        for (int j = 0; j < kN / 2; ++j) acc[i][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot, k_tiles, 0);
      device::mbarrier_arrive(&order[1 - wg]);  // the other's turn at the tensor cores
#pragma unroll
      for (int i = 0; i < Cfg::kMmas; ++i)
        store_wgmma_tile_tma<T, kN, Cfg::kStoreSlots>(
            acc[i], my_slots, &c_map, tm * Stage::kBlockM + 64 * i, tn * Stage::kBlockN,
            /*named barrier*/ 1 + wg);
    });
    drain_wgmma_tile_stores();
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

struct V20Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_pingpong_kernel<V20Config, T>;
  }
};

}  // namespace

Variant gpu_v20_wgmma_pingpong() {
  return wgmma_variant<V20Config, V20Kernels>(
      "v20_wgmma_pingpong",
      "v14's producer, ring and TMA-store epilogue with ping-pong consumers: each warpgroup owns "
      "whole 128x128 tiles (alternate tiles of the CTA), one storing while the other multiplies");
}

}  // namespace klab::hgemm

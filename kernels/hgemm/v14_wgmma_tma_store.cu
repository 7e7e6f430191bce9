// v14 wgmma_tma_store (sm_90a): v12's persistent producer and two m64n256k16 consumer
// warpgroups, with C stored through shared memory and the TMA instead of from the accumulator
// registers. Each consumer warpgroup rounds its 64 x 256 accumulators to 16 bits box by box
// (64 x 64, 8 KiB), writes a box with stmatrix into a 128-byte-swizzled slot (the TMA's
// SWIZZLE_128B layout: no bank conflicts, kernels/hgemm/wgmma_store_sm90.hpp), fences it to the
// async proxy, passes a named barrier of its 128 threads, and its thread 0 issues one TMA store
// of the box (its own bulk group). The TMA clips C's ragged edges: no masks.
// Shared memory: v12's 4-stage ring (192 KiB) leaves 35 KiB of the 227, not the 64 KiB of a whole
// 128 x 256 tile; rather than give up a stage (3 stages: 144 + 64 KiB), each warpgroup has two
// box slots (2 x 2 x 8 KiB = 32 KiB, 225 KiB in all), used in turn. Before writing a slot, thread
// 0 waits (cp.async.bulk.wait_group.read 1) until the store issued two boxes earlier, the slot's
// last, has read it, then the warpgroup's barrier lets the others write: a box's store drains
// while the next box is converted and written, and the tile's last two stores while the next
// tile's main loop runs (4 boxes a tile: box b always in slot b % 2).
// Why: v11's and v12's epilogue issues 64 4-byte stores a thread, each warp instruction writing
// 16 bytes in each of 8 rows (half sectors), and the consumers wait for all of them before their
// next tile's math; here a thread issues 16 stmatrix and the copy engine writes whole 128-byte
// rows behind the math.
// Expected bottleneck: the math still stops for the conversion and stmatrix (the two consumers
// share one tile's timing), and the main loop itself: the ring's loads and wgmma issue.
// Prediction (written before it ran, from v12's numbers in 2026-12-02_71ebeb1_wgmma_first): bf16
// 4096^3 720-740 TFLOP/s, 8192^3 680-710 (the epilogue is half as large a share of a tile at
// K = 8192, so v12's gap to v11 there is probably not all the epilogue's). Measured: docs/
// worklogs/gemm.md.
// Since, the tensor maps are prefetched at the kernel's first instruction (the producer thread
// A's and B's, consumer thread 0 C's): the kernel had no prefetch, so its first load waited for
// its map's round trip after the barriers' set-up, the block's barrier, setmaxnreg and the
// scheduler's first tile. Prediction (written before it ran), an H100, v18 paired with cuBLASLt
// against the build before: 512 x 4096 x 4096 (one wave of 128 x 128 tiles, v14's kernel)
// +0.3-1%; M >= 2048 within 0.3%.
// Requirements: sm_90a (wgmma, setmaxnreg, TMA loads and stores, stmatrix), 225 KiB of dynamic
// shared memory; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers (C's
// too); other problems run v05's kernel with element copies.
#include "kernels/hgemm/tune.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

/// v14's kernel on 128 x kBlockN tiles: the rung's own 128 x 256, and v18's unsplit 128 x 192 and
/// 128 x 128 entries (launch_v14_kernel), with v18's ring depth and store-box slots (tune.hpp).
template <int kBlockN = 256>
struct V14Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, kBlockN>;
  static constexpr int kStages = v18_stages(kBlockN), kGroupM = 16;
  static constexpr bool kPersistent = true;  // one resident wave (launch_wgmma_kernel)
  static constexpr bool kTmaStore = true;    // takes C's tensor map (launch_wgmma_kernel)
  static constexpr int kStoreSlots = v18_store_slots(kBlockN);  // per consumer warpgroup
  static constexpr int kStoreBytes = kConsumerWarps / 4 * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// The ring (1024-byte aligned: up to 1023 bytes lost aligning the base), the store slots,
  /// then the barriers.
  static constexpr int kSmemBytes =
      1024 + kStages * int(Stage::kBytes) + kStoreBytes + 2 * kStages * 8;
  static_assert(kSmemBytes == v18_smem_bytes(kBlockN) && kSmemBytes + 1024 <= 227 * 1024);
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tma_store_kernel(const __grid_constant__ CUtensorMap a_map,
                           const __grid_constant__ CUtensorMap b_map,
                           const __grid_constant__ CUtensorMap c_map, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  // The tensor maps fetched at the first instruction, while the barriers are set up and the
  // warpgroups meet: the first load (and store) no longer waits for its map's round trip.
  if (threadIdx.x == Cfg::kConsumers) {
    device::prefetch_tensor_map(&a_map);
    device::prefetch_tensor_map(&b_map);
  } else if (threadIdx.x == 0) {
    device::prefetch_tensor_map(&c_map);
  }
  // kStages x (A, B panels), then kStoreSlots boxes per consumer warpgroup, then the barriers.
  const auto [smem, store_slots, full, empty] = tma_store_smem<Cfg>(smem_raw);

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory.
  auto scheduler = [&] {
    return device::StaticTileScheduler<Cfg::kGroupM>{(m - 1) / Stage::kBlockM + 1,
                                                     (n - 1) / Stage::kBlockN + 1};
  };
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers)
      produce_wgmma_tiles<Stage, kStages>(scheduler(), smem, &a_map, &b_map, full, empty, k);
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int k_tiles = (k - 1) / Stage::kBlockK + 1;
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    device::RingSlot<kStages> slot;
    scheduler().for_each_tile([&](int tm, int tn) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot, k_tiles, wg);
      store_wgmma_tile_tma<T, kN, Cfg::kStoreSlots>(acc[0], my_slots, &c_map,
                                                    tm * Stage::kBlockM + 64 * wg,
                                                    tn * Stage::kBlockN, /*named barrier*/ 1 + wg);
    });
    drain_wgmma_tile_stores();
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <int kBlockN = 256>
struct V14Kernels {
  template <class T>
  static constexpr auto kernel() {
    return wgmma_tma_store_kernel<V14Config<kBlockN>, T>;
  }
};

}  // namespace

template <class T>
void launch_v14_kernel(const GemmArgs<T>& g, int block_n, cudaStream_t stream) {
  KLAB_CHECK(block_n == 256 || block_n == 192 || block_n == 128,
             "v14's kernel runs 128 x 256, 128 x 192 or 128 x 128 tiles, not 128 x " +
                 std::to_string(block_n));
  if (block_n == 256)
    launch_wgmma_kernel<V14Kernels<256>::kernel<T>(), V14Config<256>>(g, stream);
  else if (block_n == 192)
    launch_wgmma_kernel<V14Kernels<192>::kernel<T>(), V14Config<192>>(g, stream);
  else
    launch_wgmma_kernel<V14Kernels<128>::kernel<T>(), V14Config<128>>(g, stream);
}
template void launch_v14_kernel(const GemmArgs<__nv_bfloat16>&, int, cudaStream_t);
template void launch_v14_kernel(const GemmArgs<__half>&, int, cudaStream_t);

Variant gpu_v14_wgmma_tma_store() {
  return wgmma_variant<V14Config<256>, V14Kernels<256>>(
      "v14_wgmma_tma_store",
      "v12 storing C through shared memory: stmatrix into two swizzled 64x64 box slots per "
      "consumer warpgroup, TMA stores draining during the next box and the next tile's math");
}

}  // namespace klab::hgemm

// v18 wgmma_dispatch (sm_90a): one rung for every shape, choosing per shape class among v16's,
// v17's and v19's weight streaming (M <= 64) and v14's persistent kernel generalised two ways (kV18Entries in
// tune.hpp): 128 x 128 tiles beside v14's 128 x 256, and K split into persistent (tile, split)
// units. A split unit runs v14's main loop over its range of k-tiles and stores its fp32
// partial tile into its own workspace slice; a second kernel sums the slices in split order and
// rounds once (split_k_sm90.cuh, v16's reduction: deterministic). Unsplit units keep v14's
// stmatrix + TMA-store epilogue. The choice: `klab tune hgemm.v18_wgmma_dispatch` measures every
// entry at a shape and keeps the fastest per shape class (M rounded up to a power of two, N, K);
// without a table, a wave model picks (v18_model_seconds: units per wave at the measured per-SM
// wgmma rate, a fixed cost per unit, the partials' traffic).
// Entry 9 runs v15's kernel (2-CTA clusters with B multicast) as it is; the model never picks it,
// a tune table may. Entry 11 (added after the grid of ac8ef08) is v14's kernel on 128 x 192
// tiles (m64n192 wgmmas, 4 stages of 40 KiB, three store-box slots a consumer warpgroup): at
// M = 512, N = 6144 they are 128 tiles, one wave, where 128 x 256 tiles are 96 (0.83x cuBLASLt
// there) and 128 x 128 tiles 192. Predicted (written before it ran): 35-39 us there (v18 44.9,
// cuBLASLt ~37 in ac8ef08's run); elsewhere in the grid the same waves as 128 x 256 or more.
// Entries 12 and 13 run v13 and v12 (C stored from registers), 14 v21 (stream-K over the tail
// wave), 15 and 16 v15's kernel on 128 x 128 and 128 x 192 tiles (measured 2-10% behind entries
// 5 and 11 at M = 512 in 2026-12-04_d53a4f9_v15_narrow_grid); only a tune table picks them,
// as it does entry 17 (v24: v14's 128 x 256 tiles on B copied into rows of whole 128-byte lines).
// Why: at Qwen3-8B's projections with M = 128..512 v14's 128 x 256 tiles number 16-96 for 132
// SMs (e.g. M = 512, N = 4096: 64 tiles, half the GPU idle: 0.59x cuBLASLt in
// 2026-12-02_9c2ca7a_hopper_v15_v16), and at M <= 64 only the weight-streaming rungs come near
// the read ceiling.
// 128 x 128 tiles double the tiles at ~10% lower wgmma efficiency (an m64n128 wgmma reads A's
// shared memory twice per flop of an m64n256); split K multiplies the units again where even
// those are few (M = 128, N = 4096: 32 tiles x 4 splits).
// Prediction (written before it ran): M = 512, N = K = 4096 on 128 x 128 tiles (128 tiles, one
// wave): 27-30 us, 570-630 TFLOP/s (v14: 391, cuBLASLt 660); M = 128, N = K = 4096 with 4
// splits: 12-15 us, 290-360 TFLOP/s (v14: 99, cuBLASLt 274); M = 128, N = 4096, K = 12288: 4
// splits, 450-520 TFLOP/s (cuBLASLt 389); large shapes unchanged from v14 (the same kernel).
// Measured (2026-12-02_ac8ef08): below cuBLASLt as the geometric mean over Qwen3-8B's 32
// projection shapes (M = 1..16384), above the best earlier rung; the generated grid table and its
// geometric means are in docs/worklogs/gemm.md.
// Unsplit entries of every tile width run v14's own kernel (launch_v14_kernel: 128 x 256 since
// c491392, 128 x 192 and 128 x 128 since bf98284), the split-tiles kernel only split ones.
// Requirements: sm_90a; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers;
// other problems run v05's kernel with element copies.
#include "kernels/hgemm/split_k_sm90.cuh"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_scheduler.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

template <int kBlockN>
struct V18Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, kBlockN>;
  static constexpr int kStages = v18_stages(kBlockN), kGroupM = 16;
  static constexpr int kStoreSlots = v18_store_slots(kBlockN);  // per consumer warpgroup
  static constexpr int kStoreBytes = kConsumerWarps / 4 * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// The ring (1024-byte aligned), the store slots, then the barriers (tune.hpp's count).
  static constexpr int kSmemBytes =
      1024 + kStages * int(Stage::kBytes) + kStoreBytes + 2 * kStages * 8;
  static_assert(kSmemBytes == v18_smem_bytes(kBlockN) && kSmemBytes + 1024 <= 227 * 1024);
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
};

/// v14's kernel over the (tile, K split) units of `plan`: with one split a unit is a whole tile,
/// stored through stmatrix and the TMA; with more, each unit stores its fp32 partial into
/// workspace slice `split` (the caller then runs the reduction).
template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_split_tiles_kernel(const __grid_constant__ CUtensorMap a_map,
                             const __grid_constant__ CUtensorMap b_map,
                             const __grid_constant__ CUtensorMap c_map,
                             float* __restrict__ workspace, int m, int n, SplitKPlan plan) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  // kStages x (A, B panels), then kStoreSlots boxes per consumer warpgroup, then the barriers.
  const auto [smem, store_slots, full, empty] = tma_store_smem<Cfg>(smem_raw);

  // Computed after setmaxnreg: ptxas keeps values that live across it in local memory.
  auto scheduler = [&] {
    return device::SplitKTileScheduler<Cfg::kGroupM>{(m - 1) / Stage::kBlockM + 1,
                                                     (n - 1) / Stage::kBlockN + 1, plan.splits};
  };
  const int wg = device::warpgroup_index();
  if (wg == Cfg::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers) {
      device::RingSlot<kStages> slot;
      scheduler().for_each_unit([&](int tm, int tn, int split) {
        produce_wgmma_k_tiles<Stage>(slot, smem, &a_map, &b_map, full, empty, tm, tn,
                                     plan.k_begin(split), plan.k_end(split));
      });
    }
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each unit's tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    device::RingSlot<kStages> slot;
    scheduler().for_each_unit([&](int tm, int tn, int split) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                     plan.k_end(split) - plan.k_begin(split), wg);
      const int row0 = tm * Stage::kBlockM + 64 * wg, col0 = tn * Stage::kBlockN;
      if (plan.splits == 1)
        store_wgmma_tile_tma<T, kN, Cfg::kStoreSlots>(acc[0], my_slots, &c_map, row0, col0,
                                                      /*named barrier*/ 1 + wg);
      else
        store_wgmma_partial<kN>(acc[0], workspace + SplitKPlan::workspace_index(split, 0, 0, m, n),
                                m, n, row0, col0);
    });
    drain_wgmma_tile_stores();
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

/// K's k-tiles in `splits` contiguous ranges, none empty (fewer ranges if rounding empties one).
SplitKPlan split_k_evenly(int64_t k, int splits) {
  SplitKPlan p;
  p.k_tiles = int((k + 63) / 64);
  p.k_tiles_per_split = (p.k_tiles + splits - 1) / splits;
  p.splits = (p.k_tiles + p.k_tiles_per_split - 1) / p.k_tiles_per_split;
  return p;
}

template <int kBlockN, class T>
void launch_split_tiles(const GemmArgs<T>& g, int splits, float* workspace, cudaStream_t stream) {
  using Cfg = V18Config<kBlockN>;
  constexpr auto kKernel = wgmma_split_tiles_kernel<Cfg, T>;
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  const SplitKPlan plan = split_k_evenly(g.k, splits);
  const int64_t units =
      device::ceil_div(g.m, 128) * device::ceil_div(g.n, int64_t(kBlockN)) * plan.splits;
  const auto blocks = std::min<int64_t>(
      units,
      device::resident_wave(device_info().sm_count, kKernel, Cfg::kThreads, Cfg::kSmemBytes));
  const WgmmaMaps maps = make_wgmma_maps<typename Cfg::Stage>(g);
  kKernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      maps.a, maps.b, make_wgmma_c_map(g), workspace, g.m, g.n, plan);
  KLAB_CHECK_LAUNCH();
  if (plan.splits > 1) launch_split_k_reduce(workspace, g.c, g.m, g.n, plan.splits, stream);
}

}  // namespace

template <class T>
void launch_v14_tiles(const GemmArgs<T>& g, int block_n, int splits, float* workspace,
                      cudaStream_t stream) {
  KLAB_CHECK(
      block_n == 256 || block_n == 192 || block_n == 128,
      "v14's tiles are 128 x 256, 128 x 192 or 128 x 128, not 128 x " + std::to_string(block_n));
  if (splits == 1)
    launch_v14_kernel(g, block_n, stream);
  else if (block_n == 256)
    launch_split_tiles<256>(g, splits, workspace, stream);
  else if (block_n == 192)
    launch_split_tiles<192>(g, splits, workspace, stream);
  else
    launch_split_tiles<128>(g, splits, workspace, stream);
}
template void launch_v14_tiles(const GemmArgs<__nv_bfloat16>&, int, int, float*, cudaStream_t);
template void launch_v14_tiles(const GemmArgs<__half>&, int, int, float*, cudaStream_t);

void launch_v18_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  const WgmmaDispatchEntry& e = kV18Entries[index];
  if (e.rung == 16) return launch_v16(p, b, args);
  if (e.rung == 17) return launch_v17(p, b, args);
  if (e.rung == 19) return launch_v19(p, b, args);
  if (e.rung == 15) return launch_v15(e.block_n, p, b, args);
  if (e.rung == 13) return launch_v13(p, b, args);
  if (e.rung == 12) return launch_v12(p, b, args);
  if (e.rung == 21) return launch_v21(p, b, args);  // its flags last (v18_workspace_bytes)
  if (e.rung == 24) return launch_v24(p, b, args);
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (!g.vec16())
      launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
    else
      launch_v14_tiles(g, e.block_n, e.splits, static_cast<float*>(b.workspace), stream_of(args));
  });
}

Variant gpu_v18_wgmma_dispatch() {
  Variant v = gpu_variant(
      "v18_wgmma_dispatch",
      "per shape class (klab tune, else a wave model): v16, v17 or v19 weight streaming at "
      "M <= 64 (v19 to 128), v14's kernel on 128x256, 128x192 or 128x128 tiles with K split into "
      "persistent (tile, split) units, v15's clusters on 128x256, 128x192 or 128x128 tiles, v12's "
      "or v13's kernel (C stored from registers), v21's stream-K over the tail wave, or v24 (v14's "
      "tiles on B copied into whole 128-byte rows)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch_v18_config(v18_tuned_config(p), p, b, args);
      });
  v.info.min_sm = 90;
  v.can_implement = [](const Problem& p) {
    // Entry 2 (v14's tiles) runs every problem a wgmma rung can; the choice falls back to it.
    return v18_config_can_implement(2, p);
  };
  v.workspace_bytes = v18_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm

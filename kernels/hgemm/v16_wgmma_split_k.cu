// v16 wgmma_split_k (sm_90a): a rung for M <= 64, where the product is bound by reading B (the
// K x N weight): C's M rows are one m64 block, and the work is split over N and K so that one
// wave of CTAs streams B at the read ceiling. The grid is (N slabs of 128) x (K splits); every
// CTA (two per SM) has a producer warp, whose lane 0 issues the TMA boxes of its slab's k-tiles
// (A's 64 x 64 box, rows past M zero-filled by the TMA without reading memory, and B's two 64 x 64
// panels) into a 4-stage mbarrier ring, and one consumer warpgroup that runs v10's
// m64n128k16 wgmma over each stage (wgmma_mainloop_sm90.cuh). With one split a CTA rounds and
// stores its 64 x 128 block of C directly; with more, each split stores fp32 partials into its
// own slice of a workspace and a second kernel sums the slices in split order
// (kernels/hgemm/split_k_plan.hpp: deterministic, no atomics).
// Why: the 128-row tiles of v10-v15 read B once per tile but waste 7/8 of each wgmma at M = 16
// and, at N = 24576, have 192 tiles for 132 SMs with one CTA each: too few bytes in flight.
// Here a CTA keeps 4 x 16 KiB of B in flight (two CTAs: 128 KiB per SM; Little's law at ~4.5
// TB/s and ~1 us asks ~35 KiB), and the split count fills one wave where the slabs are few
// (N = 4096: 32 slabs x 8 splits).
// Expected bottleneck: DRAM reads of B; the split-K workspace adds 2 x 4 x splits x M x N bytes
// (one write, one read; e.g. 6% of B's bytes at M = 16, N = K = 4096, none at N = 24576).
// Prediction (written before it ran): M = 16, N = 24576, K = 4096 bf16: B's 201 MB at 3.9-4.2
// TB/s, 48-52 us, 62-68 TFLOP/s (cuBLASLt reads 4.1 TB/s there), 0.95-1.03x cuBLASLt; M = 64
// the same time (the wgmma is the same m64 either way).
// Measured (2026-12-02_9c2ca7a): below cuBLASLt at every M <= 64 shape, least at M = 16, N =
// 24576 where 192 CTAs fall unevenly on 132 SMs; the numbers are in docs/worklogs/gemm.md.
// Requirements: sm_90a (wgmma, TMA), M <= 64 (can_implement refuses larger M), 97 KiB of dynamic
// shared memory a CTA; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers;
// other problems run v05's kernel with element copies.
#include "kernels/hgemm/split_k_sm90.cuh"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V16Config {
  using W = WeightStreaming;  // the geometry, visible to host code (tune.hpp)
  using Stage = WgmmaStage<W::kBlockM, W::kBlockN>;  // A's m64 block, B's slab of two panels
  static constexpr int kStages = W::kStages, kCtasPerSm = W::kCtasPerSm;
  static constexpr int kConsumers = 128, kThreads = kConsumers + 32;  // + the producer warp
  static constexpr int kSmemBytes = W::kSmemBytes;
  static_assert(int(Stage::kBytes) == W::kStageBytes && Stage::kBlockK == W::kBlockK);
  static_assert(kCtasPerSm * (kSmemBytes + 1024) <= 228 * 1024, "two CTAs an SM");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtasPerSm)
    wgmma_split_k_kernel(const __grid_constant__ CUtensorMap a_map,
                         const __grid_constant__ CUtensorMap b_map, T* __restrict__ c,
                         float* __restrict__ workspace, int m, int n, SplitKPlan plan) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma is sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (A, B panels)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp.
  device::init_ring<kStages>(full, empty, 1, Cfg::kConsumers / 32);

  const int split = int(blockIdx.y), n0 = int(blockIdx.x) * kN;
  const int kt_begin = plan.k_begin(split), kt_end = plan.k_end(split);
  if (threadIdx.x >= Cfg::kConsumers) {  // the producer warp: lane 0 issues every box
    if (threadIdx.x == Cfg::kConsumers) {
      device::RingSlot<kStages> slot;
      for (int kt = kt_begin; kt < kt_end; ++kt, slot = slot.next()) {
        // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
        device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
        load_wgmma_stage<Stage>(smem + slot.index * Stage::kBytes, &a_map, &b_map, kt, 0, n0,
                                &full[slot.index]);
      }
    }
  } else {  // the consumer warpgroup: C's rows 0 .. 63 (those below m stored) x the slab
    float acc[1][kN / 2];
#pragma unroll
    for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
    device::RingSlot<kStages> slot;
    consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                   kt_end - kt_begin, 0);
    if (plan.splits == 1)
      store_wgmma_tile<T, kN>(acc[0], c, m, n, 0, n0);
    else
      store_wgmma_partial<kN>(acc[0], workspace + SplitKPlan::workspace_index(split, 0, 0, m, n), m,
                              n, 0, n0);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <class T>
void launch_v16_kernel(const GemmArgs<T>& g, const SplitKPlan& plan, float* workspace,
                       cudaStream_t stream) {
  using Cfg = V16Config;
  constexpr auto kKernel = wgmma_split_k_kernel<Cfg, T>;
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  const WgmmaMaps maps = make_wgmma_maps<typename Cfg::Stage>(g);
  kKernel<<<dim3(unsigned(plan.tiles_n), unsigned(plan.splits)), Cfg::kThreads, Cfg::kSmemBytes,
            stream>>>(maps.a, maps.b, g.c, workspace, g.m, g.n, plan);
  KLAB_CHECK_LAUNCH();
  if (plan.splits > 1) launch_split_k_reduce(workspace, g.c, g.m, g.n, plan.splits, stream);
}

}  // namespace

void launch_v16(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (g.vec16())
      launch_v16_kernel(g, v16_plan(p), static_cast<float*>(b.workspace), stream_of(args));
    else
      launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
  });
}

Variant gpu_v16_wgmma_split_k() {
  Variant v = gpu_variant(
      "v16_wgmma_split_k",
      "M <= 64 weight streaming: (N slab x K split) CTAs, two an SM, each a producer warp and "
      "one m64n128 wgmma warpgroup on a 4-stage TMA ring; split partials summed in order",
      launch_v16);
  v.info.min_sm = 90;
  v.can_implement = v16_can_implement;
  v.workspace_bytes = v16_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm

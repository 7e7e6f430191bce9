// v17 wgmma_stream_k (sm_90a): v16's weight streaming (M <= 64: C's rows one m64 block, B read
// once in slabs of 128 columns) with the work divided by stream-K instead of split-K. The slabs'
// k-tiles form one line of tiles_n x k_tiles units; each of one resident CTA per SM takes an
// equal contiguous piece of it (stream_k_plan.hpp), so every SM streams the same bytes whatever
// N is. A piece crosses slab boundaries: for each slab it touches, the CTA's consumer warpgroup
// runs v16's m64n128k16 main loop over its segment of the slab's k-tiles, then either stores C
// directly (the slab lies inside the piece) or stores its fp32 partial into its own workspace
// slot, fences, and counts itself in on the slab's arrival counter; the segment that arrives
// last sums the slab's slots in CTA order (the same bits whichever arrives last), stores C and
// resets the counter for the next launch. One launch: no second reduction kernel.
// Why: v16 measured 0.78-0.93x cuBLASLt at M <= 64 (2026-12-02_9c2ca7a_hopper_v15_v16). At N =
// 24576 its 192 slab CTAs (two an SM) leave 60 SMs with twice the bytes of the others (DRAM
// 70% busy under Nsight, `long_scoreboard` 83% of the stalls); at N = 4096 (32 slabs x 8 splits)
// the second kernel and its launch gap cost ~3 of its 17.5 us. Here one CTA an SM keeps a deeper
// ring (8 stages, 192 KiB of B in flight per SM against v16's 2 x 4 x 24 KiB) over a piece
// balanced to one k-tile.
// Prediction (written before it ran): M = 16, N = 24576, K = 4096: B's 201 MB at 3.9-4.2 TB/s,
// 48-52 us (v16 62 us, cuBLASLt 48.6 us): 0.95-1.02x cuBLASLt; M = 16, N = K = 4096: 13-15 us
// (v16 17.5, cuBLASLt 14.8): 0.98-1.12x.
// Measured (2026-12-02_ac8ef08): slower than v16 at every M <= 64 shape, the more so the larger
// M: the prediction is refuted; the numbers are in docs/worklogs/gemm.md.
// Requirements: sm_90a, M <= 64, 193 KiB of dynamic shared memory; the TMA path needs k % 8 ==
// 0, n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel with element copies.
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V17Config {
  using W = StreamKWeight;  // the geometry, visible to host code (tune.hpp)
  using Stage = WgmmaStage<W::kBlockM, W::kBlockN>;  // A's m64 block, B's slab of two panels
  static constexpr int kStages = W::kStages;
  static constexpr int kConsumers = 128, kThreads = kConsumers + 32;  // + the producer warp
  static constexpr int kSmemBytes = W::kSmemBytes;
  static_assert(int(Stage::kBytes) == W::kStageBytes && Stage::kBlockK == W::kBlockK);
  static_assert(kSmemBytes <= 227 * 1024);
};

/// The last segment of slab t to arrive: C's m x kN slab at column col0 = the slab's partial
/// slots summed in CTA order (L2 reads: other CTAs wrote them), rounded once; then the counter
/// is reset for the next launch. The consumer warpgroup's 128 threads, two columns each.
template <class T, int kN>
__device__ __forceinline__ void reduce_stream_k_slab(const StreamKPlan& plan, int t,
                                                     const float* __restrict__ partials,
                                                     T* __restrict__ c, int m, int n) {
  using T2 = std::conditional_t<std::is_same_v<T, __nv_bfloat16>, __nv_bfloat162, __half2>;
  const int col0 = t * kN;
  for (int i = int(threadIdx.x); i < m * (kN / 2); i += 128) {
    const int row = i / (kN / 2), col = 2 * (i % (kN / 2));
    if (col0 + col >= n) continue;
    float2 sum = make_float2(0.f, 0.f);
    for (int cta = plan.first_cta(t); cta <= plan.last_cta(t); ++cta) {
      const float2 v = __ldcg(
          reinterpret_cast<const float2*>(partials + (plan.slot(cta, t) * m + row) * kN + col));
      sum.x += v.x;
      sum.y += v.y;
    }
    *reinterpret_cast<T2*>(c + size_t(row) * size_t(n) + col0 + col) = round_pair<T>(sum.x, sum.y);
  }
}

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_stream_k_kernel(const __grid_constant__ CUtensorMap a_map,
                          const __grid_constant__ CUtensorMap b_map, T* __restrict__ c,
                          float* __restrict__ partials, int* __restrict__ counters, int m, int n,
                          StreamKPlan plan) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma is sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN;
  extern __shared__ unsigned char smem_raw[];
  __shared__ int last_arrival;  // the consumer warpgroup's verdict for the current slab
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (A, B panels)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp.
  device::init_ring<kStages>(full, empty, 1, Cfg::kConsumers / 32);

  const int cta = int(blockIdx.x);
  const int t_first = int(plan.begin(cta) / plan.k_tiles);
  const int t_last = int((plan.begin(cta + 1) - 1) / plan.k_tiles);
  if (threadIdx.x >= Cfg::kConsumers) {  // the producer warp: lane 0 issues every box
    if (threadIdx.x == Cfg::kConsumers) {
      device::RingSlot<kStages> slot;
      for (int t = t_first; t <= t_last; ++t)
        produce_wgmma_k_tiles<Stage>(slot, smem, &a_map, &b_map, full, empty, 0, t,
                                     plan.seg_begin(cta, t), plan.seg_end(cta, t));
    }
  } else {  // the consumer warpgroup: C's rows 0 .. 63 (those below m stored) x each slab
    device::RingSlot<kStages> slot;
    for (int t = t_first; t <= t_last; ++t) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                     plan.seg_end(cta, t) - plan.seg_begin(cta, t), 0);
      if (plan.first_cta(t) == plan.last_cta(t)) {  // the whole slab is this piece's
        store_wgmma_tile<T, kN>(acc[0], c, m, n, 0, t * kN);
        continue;
      }
      // This segment's partial, then its arrival: stores, fence, barrier, one atomic.
      float* mine = partials + plan.slot(cta, t) * m * kN;
      const int tid = int(threadIdx.x);
#pragma unroll
      for (int i = 0; i < kN / 2; i += 2) {
        const device::WgmmaAccCoord at = device::wgmma_acc_coord(tid, i);
        if (at.row < m)
          __stcg(reinterpret_cast<float2*>(mine + at.row * kN + at.col),
                 make_float2(acc[0][i], acc[0][i + 1]));
      }
      __threadfence();
      device::named_barrier_sync(1, Cfg::kConsumers);
      if (tid == 0)
        last_arrival = atomicAdd(&counters[t], 1) == plan.last_cta(t) - plan.first_cta(t) ? 1 : 0;
      device::named_barrier_sync(1, Cfg::kConsumers);
      if (last_arrival) {
        __threadfence();  // the other segments' partials, seen through their arrivals
        reduce_stream_k_slab<T, kN>(plan, t, partials, c, m, n);
        if (tid == 0) counters[t] = 0;  // the next launch counts from zero again
      }
      device::named_barrier_sync(1, Cfg::kConsumers);  // last_arrival is rewritten next slab
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <class T>
void launch_v17_kernel(const GemmArgs<T>& g, const StreamKPlan& plan, void* workspace,
                       cudaStream_t stream) {
  using Cfg = V17Config;
  constexpr auto kKernel = wgmma_stream_k_kernel<Cfg, T>;
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  float* partials = static_cast<float*>(workspace);
  int* counters = reinterpret_cast<int*>(partials + plan.partial_floats(g.m, Cfg::Stage::kBlockN));
  const WgmmaMaps maps = make_wgmma_maps<typename Cfg::Stage>(g);
  kKernel<<<unsigned(plan.ctas), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      maps.a, maps.b, g.c, partials, counters, g.m, g.n, plan);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

void launch_v17(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (g.vec16())
      launch_v17_kernel(g, v17_plan(p), b.workspace, stream_of(args));
    else
      launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
  });
}

Variant gpu_v17_wgmma_stream_k() {
  Variant v = gpu_variant(
      "v17_wgmma_stream_k",
      "M <= 64 weight streaming by stream-K: one CTA an SM takes an equal piece of the slabs' "
      "k-tiles (8-stage TMA ring, m64n128 wgmma); slabs split between pieces summed in order by "
      "the last to arrive",
      launch_v17);
  v.info.min_sm = 90;
  v.can_implement = v17_can_implement;
  v.workspace_bytes = v17_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm

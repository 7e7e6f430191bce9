// v23 wgmma_swap_ab_stream_k (sm_90a): v19's swapped-operand weight streaming (M <= 64) on every
// SM by stream-K. v19 gives each CTA whole slabs of B's columns (64 or 192) and splits K over a
// cluster to fill the GPU, so its grids leave SMs idle where the slabs do not divide into 132:
// N = 24576 is 128 CTAs of 192 columns, N = K = 4096 128 CTAs (64 slabs x 2 splits), N = 6144 96
// CTAs of 64 columns (kV19Entries). Its CTAs stream at ~34 GB/s, the SM's limit here (two CTAs an
// SM streamed no faster: 2026-12-02_984292d), so an idle SM is bandwidth not drawn: at N = 6144
// DRAM was 65% busy.
// What changes: v17's stream-K line (stream_k_plan.hpp's StreamKPlan: 64-column slabs x 64-deep
// k-tiles, slab-major, one equal contiguous piece a CTA, one CTA an SM on all of them) on v19's
// CTA (swap_ab_sm90.cuh: one m64 block of the weight's columns as wgmma's M, the tokens as its
// N, two accumulator chains, the TMA ring). A CTA walks its piece's segments, one slab each; a
// slab inside one piece is stored as v19 stores it; a slab split between pieces has each segment
// store its fp32 accumulators in its own slot (64 x kTok floats), fence and count itself in on
// the slab's counter, and the last to count (told to its warpgroup by bar.red.or) resets the
// counter, sums the slots in CTA order (the same bits whichever is last) and stores C. No CTA
// waits for another. The partials are 4 KiB (16 tokens) or 16 KiB (64) a split slab, in L2.
// Prediction (written before it ran), paired with v19 (v18's pick at M <= 64) and cuBLASLt: N =
// 6144 at M = 1 and 16 1.15-1.3x v19 (every SM at ~34 GB/s: 132 of them against 96); N = 24576,
// N = K = 4096 and K = 12288 1.00-1.03x v19 (132 SMs against 128, where DRAM, 84% busy, may take
// the rest); M = 64 as M = 16 less the larger partials. Refuted if N = 6144 does not gain.
// Requirements: sm_90a, M <= 64 (the tokens one wgmma N of 16 or 64), v19's shared memory; the
// TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers; other problems run v05's
// kernel with element copies.
// Measured (2026-12-05_382bde2_hgemm_v23): refuted, 0.83-0.88x cuBLASLt (v19 0.98-1.12x); its
// pieces start all over K (the worklog's alignment test).
#include "kernels/hgemm/partial_slots_sm90.cuh"
#include "kernels/hgemm/stream_k_plan.hpp"
#include "kernels/hgemm/swap_ab_sm90.cuh"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/pdl.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

template <int kTok>
using V23Config = swap_ab::V19Config</*blocks*/ 1, kTok, /*splits*/ 1>;

/// A split slab's slot (partial_slots_sm90.cuh's layout): the consumer warpgroup's kTok / 2
/// floats a thread, 64 columns x kTok tokens.
template <int kTok>
constexpr int kV23SlotFloats = 128 * kTok / 2;

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_swap_ab_stream_k_kernel(const __grid_constant__ CUtensorMap a_map,
                                  const __grid_constant__ CUtensorMap b_map, T* __restrict__ c,
                                  int m, int n, StreamKPlan plan, float* __restrict__ partials,
                                  int* __restrict__ counters) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma is sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kTok = Stage::kTok;
  static_assert(Cfg::kConsumers == 128, "the slots' layout: a float4 a step of 128 threads");
  static_assert(Stage::kBlocks == 1 && Stage::kBlockN == 64, "64-column slabs: the plan's");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (B panel, A)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  device::init_ring<kStages>(full, empty, 1, Cfg::kConsumers / 32);
  device::allow_dependent_launch();
  const int cta = int(blockIdx.x);
  const int t_first = int(plan.begin(cta) / plan.k_tiles);
  const int t_last = int((plan.begin(cta + 1) - 1) / plan.k_tiles);
  if (threadIdx.x >= Cfg::kConsumers) {  // the producer warp: lane 0 issues every box
    if (threadIdx.x == Cfg::kConsumers) {
      device::prefetch_tensor_map(&b_map);
      device::prefetch_tensor_map(&a_map);
      device::grid_dependency_wait();  // launched programmatically, A may still be being written
      device::RingSlot<kStages> slot;
      for (int t = t_first; t <= t_last; ++t)
        for (int kt = plan.seg_begin(cta, t); kt < plan.seg_end(cta, t); ++kt) {
          device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
          unsigned char* stage = smem + slot.index * Stage::kBytes;
          device::mbarrier_arrive_expect_tx(&full[slot.index], Stage::kBytes);
          device::tma_load_2d(stage, &b_map, 64 * t, kt * Stage::kBlockK, &full[slot.index]);
          device::tma_load_2d(stage + Stage::kBytesB, &a_map, kt * Stage::kBlockK, 0,
                              &full[slot.index]);
          slot = slot.next();
        }
    }
    return;
  }
  // The consumer warpgroup: each segment of its piece, one slab of 64 columns.
  const int tid = int(threadIdx.x), barrier = 1;
  const bool lane0 = tid % 32 == 0;
  const uint32_t ring = device::smem_addr(smem);
  device::RingSlot<kStages> slot;
  for (int t = t_first; t <= t_last; ++t) {
    float chains[Cfg::kChains][1][kTok / 2];
#pragma unroll
    for (int ch = 0; ch < Cfg::kChains; ++ch)
#pragma unroll
      for (int i = 0; i < kTok / 2; ++i) chains[ch][0][i] = 0.f;
    consume_wgmma_ring(
        full, slot, plan.seg_end(cta, t) - plan.seg_begin(cta, t),
        [&](int s) { swap_ab::mma_swap_ab_stage<Stage, T>(chains, ring + s * Stage::kBytes); },
        [&](int s) {
          if (lane0) device::mbarrier_arrive(&empty[s]);
        });
#pragma unroll
    for (int ch = 0; ch < Cfg::kChains; ++ch) device::wgmma_fence_operands(chains[ch][0]);
    auto& acc = chains[0];
#pragma unroll
    for (int ch = 1; ch < Cfg::kChains; ++ch)
#pragma unroll
      for (int i = 0; i < kTok / 2; ++i) acc[0][i] += chains[ch][0][i];
    const int first = plan.first_cta(t), last = plan.last_cta(t);
    if (first < last) {  // a split slab: this segment's slot, its count; the last sums them all
      auto slot_of = [&](int owner) {
        return reinterpret_cast<float4*>(partials + plan.slot(owner, t) * kV23SlotFloats<kTok>);
      };
      store_slot<kTok>(slot_of(cta), acc[0], tid);
      __threadfence();  // the slot before the count, device-wide
      device::named_barrier_sync(barrier, Cfg::kConsumers);
      bool counted_last = false;
      if (tid == 0) {
        counted_last = atomicAdd(&counters[t], 1) == last - first;
        if (counted_last) counters[t] = 0;  // every segment has counted: the next launch's zero
      }
      if (!device::named_barrier_or(barrier, Cfg::kConsumers, counted_last)) continue;
      __threadfence();  // the other segments' slots after their counts
      // CTA order from the slab's first segment: the same bits whichever counted last.
      add_slot<kTok, true>(acc[0], slot_of(first), tid);
      for (int owner = first + 1; owner <= last; ++owner)
        add_slot<kTok>(acc[0], slot_of(owner), tid);
    }
    swap_ab::store_swap_ab<Stage, T>(acc, c, m, n, 64 * t);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <int kTok, class T>
void launch_v23_tokens(const GemmArgs<T>& g, void* workspace, size_t workspace_bytes,
                       bool programmatic, cudaStream_t stream) {
  using Cfg = V23Config<kTok>;
  constexpr auto kKernel = wgmma_swap_ab_stream_k_kernel<Cfg, T>;
  const StreamKPlan plan = v23_plan(g.n, g.k);
  KLAB_CHECK(workspace_bytes >= plan.workspace_bytes(kTok, 64),
             "v23: the workspace is smaller than its plan's partials and counters");
  float* partials = static_cast<float*>(workspace);
  int* counters = reinterpret_cast<int*>(partials + plan.partial_floats(kTok, 64));
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  const device::LaunchAttributes attrs(0, programmatic);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(plan.ctas));
  config.blockDim = dim3(Cfg::kThreads);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = stream;
  attrs.apply(config);
  // The weight's rows promoted 128 bytes in L2 (v19's reason).
  const CUtensorMap a_map = make_a_map(g, kTok),
                    b_map = make_b_panel_map(g, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  KLAB_CUDA_CHECK(
      cudaLaunchKernelEx(&config, kKernel, a_map, b_map, g.c, g.m, g.n, plan, partials, counters));
}

}  // namespace

void launch_v23(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (!g.vec16()) return launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
    KLAB_CHECK(g.m <= 64, "v23: m above 64 (the tokens are one wgmma N of 16 or 64)");
    if (v19_tokens(g.m) == 16)
      return launch_v23_tokens<16>(g, b.workspace, b.workspace_bytes, args.programmatic,
                                   stream_of(args));
    launch_v23_tokens<64>(g, b.workspace, b.workspace_bytes, args.programmatic, stream_of(args));
  });
}

Variant gpu_v23_wgmma_swap_ab_stream_k() {
  Variant v = gpu_variant(
      "v23_wgmma_swap_ab_stream_k",
      "M <= 64 weight streaming on every SM: v19's swapped-operand CTA on 64-column slabs over "
      "v17's stream-K line, split slabs summed in CTA order by the last segment to count",
      launch_v23);
  v.info.min_sm = 90;
  v.can_implement = v23_can_implement;
  v.workspace_bytes = v23_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm

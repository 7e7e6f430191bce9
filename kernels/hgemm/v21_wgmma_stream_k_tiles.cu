// v21 wgmma_stream_k_tiles (sm_90a): v14's persistent kernel (one producer, two m64n256k16
// consumer warpgroups on 128 x 256 tiles, a 4-stage TMA ring, C stored box by box through
// stmatrix and the TMA) with the tail wave spread by stream-K. The tiles that fill whole waves
// of the grid are taken whole, as v14 takes them; the k-tiles of the rest form one line that
// every CTA takes an equal piece of, first (stream_k_plan.hpp's StreamKTilesPlan). A tile split
// between pieces is summed in the kernel: each segment but the owner's (the one holding k-tile
// 0, its piece's last) stores its fp32 accumulators in its CTA's workspace slot, each thread its
// own registers as float4s (the owner's threads read them back in the same layout: no
// shuffle), fences and counts itself in on the tile's flag; the owner waits for the count, adds
// the slots in CTA order to its own registers, resets the flag for the next launch and stores C
// through v14's epilogue. One launch, the same bits every run.
// Why: v18's tiles leave the last wave part-empty where the tiles are not a multiple of 132:
// 4096^3 is 512 tiles of 128 x 256, 3.88 waves (the fourth 88% full); Qwen3-8B's projections at
// M = 512 are 64-96 such tiles, under one wave, where v18 falls back to 128 x 128 or 128 x 192
// tiles (0.96-0.98x cuBLASLt, 2026-12-04_c6ccbfb_interleaved_grids). Stream-K keeps every SM
// on 128 x 256 tiles to the end; the partials cost one 128 KiB write and read a split segment.
// Prediction (written before it ran): 4096^3 +1-3% over v18's 128 x 256 entry (the tail wave's
// idle SMs, less the partials); M = 512 x N = 4096 x K = 4096 22-25 us (v18 27.2, cuBLASLt
// 26.0: 1.04-1.18x), K = 12288 60-66 us (v18 72.6, cuBLASLt 71.2); at whole waves (tiles a
// multiple of 132) the same as v14.
// Requirements: sm_90a, every CTA of the grid resident at once (one an SM: the owners wait for
// later CTAs' first segments); 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0,
// n % 8 == 0 and 16-byte aligned pointers; other problems run v05's kernel with element copies.
#include "kernels/hgemm/stream_k_plan.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/flag.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_order.hpp"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

struct V21Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 256>;
  static constexpr int kStages = v18_stages(256), kGroupM = 16;
  static constexpr int kStoreSlots = v18_store_slots(256);  // per consumer warpgroup
  static constexpr int kStoreBytes = kConsumerWarps / 4 * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// v14's and v18's layout: the ring (1024-byte aligned), the store slots, then the barriers.
  static constexpr int kSmemBytes = v18_smem_bytes(256);
  static_assert(kSmemBytes == 1024 + kStages * int(Stage::kBytes) + kStoreBytes + 2 * kStages * 8);
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
  /// A CTA's workspace slot: its two warpgroups' 64 x 256 fp32 accumulators.
  static constexpr int kSlotFloats = kConsumerWarps / 4 * 64 * Stage::kBlockN;
};

/// One unit of a CTA's work: k-tiles k_begin .. k_end - 1 of tile (tm, tn); sk: its stream-K
/// tile (-1 for a whole-wave tile).
struct Work {
  int tm, tn, k_begin, k_end, sk;
};

/// Calls fn(Work) for CTA `cta`'s units in order: its stream-K piece's segments, then its
/// whole-wave tiles (producer and consumers walk the same list).
template <int kGroupM, class Fn>
__device__ __forceinline__ void for_each_work(const StreamKTilesPlan& plan, int cta, int tiles_m,
                                              int tiles_n, Fn&& fn) {
  const int k_tiles = plan.line.k_tiles;
  if (cta < plan.line.ctas) {
    for (int s = plan.first_tile(cta); s <= plan.last_tile(cta); ++s) {
      const auto c = device::grouped_tile_order<int>(plan.dp_tiles + s, kGroupM, tiles_m, tiles_n);
      fn(Work{c.m, c.n, plan.line.seg_begin(cta, s), plan.line.seg_end(cta, s), s});
    }
  }
  for (int t = cta; t < plan.dp_tiles; t += plan.ctas) {
    const auto c = device::grouped_tile_order<int>(t, kGroupM, tiles_m, tiles_n);
    fn(Work{c.m, c.n, 0, k_tiles, -1});
  }
}

/// The warpgroup's accumulators in a workspace slot: thread t's float4 j at float4 index
/// j * 128 + t of its warpgroup's half (each warp's 32 float4s a step are 512 contiguous bytes).
template <int kN>
__device__ __forceinline__ float4* slot_half(float* slot, int wg) {
  return reinterpret_cast<float4*>(slot + wg * 64 * kN);
}

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_stream_k_tiles_kernel(const __grid_constant__ CUtensorMap a_map,
                                const __grid_constant__ CUtensorMap b_map,
                                const __grid_constant__ CUtensorMap c_map,
                                float* __restrict__ partials, int* __restrict__ flags, int m, int n,
                                StreamKTilesPlan plan) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kN = Stage::kBlockN, kWgs = Cfg::kConsumerWarps / 4;
  extern __shared__ unsigned char smem_raw[];
  // kStages x (A, B panels), then kStoreSlots boxes per consumer warpgroup, then the barriers.
  const auto [smem, store_slots, full, empty] = tma_store_smem<Cfg>(smem_raw);

  const int cta = int(blockIdx.x);
  const int tiles_m = (m - 1) / Stage::kBlockM + 1, tiles_n = (n - 1) / kN + 1;
  const int wg = device::warpgroup_index();
  if (wg == kWgs) {  // the producer warpgroup: one thread issues every box
    device::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == Cfg::kConsumers) {
      device::RingSlot<kStages> slot;
      for_each_work<Cfg::kGroupM>(plan, cta, tiles_m, tiles_n, [&](const Work& w) {
        produce_wgmma_k_tiles<Stage>(slot, smem, &a_map, &b_map, full, empty, w.tm, w.tn, w.k_begin,
                                     w.k_end);
      });
    }
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each unit's tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    const int t = device::warpgroup_thread(), barrier = 1 + wg;  // the warpgroup's named barrier
    device::RingSlot<kStages> slot;
    for_each_work<Cfg::kGroupM>(plan, cta, tiles_m, tiles_n, [&](const Work& w) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                     w.k_end - w.k_begin, wg);
      const bool whole = w.k_begin == 0 && w.k_end == plan.line.k_tiles;
      if (!whole && w.k_begin > 0) {  // a contributor: the slot, then the count
        float4* mine = slot_half<kN>(partials + size_t(cta) * Cfg::kSlotFloats, wg);
#pragma unroll
        for (int j = 0; j < kN / 8; ++j)
          __stcg(mine + j * 128 + t, make_float4(acc[0][4 * j], acc[0][4 * j + 1],
                                                 acc[0][4 * j + 2], acc[0][4 * j + 3]));
        __threadfence();  // the slot before the count, device-wide
        device::named_barrier_sync(barrier, device::kWarpgroupThreads);
        if (t == 0) atomicAdd(&flags[w.sk * kWgs + wg], 1);
        return;
      }
      if (!whole) {  // the owner: every contributor's slot, in CTA order, onto its own part
        int* flag = &flags[w.sk * kWgs + wg];
        if (t == 0) {
          const int expected = plan.contributors(w.sk);
          device::wait_count_at_least(flag, expected);
          *flag = 0;  // every contributor has counted: the next launch starts from zero
        }
        device::named_barrier_sync(barrier, device::kWarpgroupThreads);
        const int first = plan.owner(w.sk) + 1, last = first + plan.contributors(w.sk);
        for (int c = first; c < last; ++c) {
          const float4* theirs = slot_half<kN>(partials + size_t(c) * Cfg::kSlotFloats, wg);
#pragma unroll
          for (int j = 0; j < kN / 8; ++j) {
            const float4 v = __ldcg(theirs + j * 128 + t);
            acc[0][4 * j] += v.x;
            acc[0][4 * j + 1] += v.y;
            acc[0][4 * j + 2] += v.z;
            acc[0][4 * j + 3] += v.w;
          }
        }
      }
      store_wgmma_tile_tma<T, kN, Cfg::kStoreSlots>(
          acc[0], my_slots, &c_map, w.tm * Stage::kBlockM + 64 * wg, w.tn * kN, barrier);
    });
    drain_wgmma_tile_stores();
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

template <class T>
void launch_v21_kernel(const GemmArgs<T>& g, void* workspace, size_t flags_offset,
                       cudaStream_t stream) {
  using Cfg = V21Config;
  constexpr auto kKernel = wgmma_stream_k_tiles_kernel<Cfg, T>;
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  // Every CTA resident at once: no more than a wave of this kernel, nor than the workspace's
  // slots (v21_workspace_bytes sizes them for plan_sm_count()).
  const int slots =
      int(std::min<int64_t>(v21_max_ctas(), device::resident_wave(device_info().sm_count, kKernel,
                                                                  Cfg::kThreads, Cfg::kSmemBytes)));
  const StreamKTilesPlan plan = v21_plan(g.m, g.n, g.k, slots);
  static_assert(Cfg::kSlotFloats * sizeof(float) == 128 * 1024, "v21_slot_bytes' slot");
  float* partials = static_cast<float*>(workspace);
  int* flags = reinterpret_cast<int*>(static_cast<unsigned char*>(workspace) + flags_offset);
  const WgmmaMaps maps = make_wgmma_maps<typename Cfg::Stage>(g);
  kKernel<<<unsigned(plan.ctas), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      maps.a, maps.b, make_wgmma_c_map(g), partials, flags, g.m, g.n, plan);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

void launch_v21(const Problem& p, Buffers& b, const LaunchArgs& args) {
  // The flags are the workspace's last bytes, past whatever else a caller's layout puts there.
  const size_t flags = v21_flag_bytes(p);
  if (b.workspace_bytes < v21_slot_bytes() + flags)
    throw Error("v21: a workspace of " + std::to_string(b.workspace_bytes) + " bytes, needs " +
                std::to_string(v21_slot_bytes() + flags));
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (g.vec16())
      launch_v21_kernel(g, b.workspace, b.workspace_bytes - flags, stream_of(args));
    else
      launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
  });
}

Variant gpu_v21_wgmma_stream_k_tiles() {
  Variant v = gpu_variant(
      "v21_wgmma_stream_k_tiles",
      "v14's 128x256 persistent kernel with the tail wave spread by stream-K: whole waves of "
      "tiles taken whole, the rest's k-tiles in equal pieces a CTA, split tiles summed in CTA "
      "order by the CTA holding their first k-tile",
      launch_v21);
  v.info.min_sm = 90;
  v.can_implement = v21_can_implement;
  v.workspace_bytes = v21_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm

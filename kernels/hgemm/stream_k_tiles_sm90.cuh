#pragma once
// The stream-K tile kernel of hgemm v21 and v22 (sm_90a): v14's persistent kernel (one producer,
// two m64n256k16 consumer warpgroups on 128 x 256 tiles, a 4-stage TMA ring, C stored box by box
// through stmatrix and the TMA) with the tail wave spread by stream-K (stream_k_plan.hpp's
// StreamKTilesPlan): the tiles of whole waves taken whole, the k-tiles of the rest in one line of
// equal pieces a CTA, run first. kAligned picks how a split tile is summed and the order of a
// piece's segments:
// - v21 (false): in the line's order; each segment but the owner's (the one holding k-tile 0,
//   its piece's last) stores its fp32 accumulators in its CTA's workspace slot, each thread its
//   own registers as float4s (read back in the same layout: no shuffle), fences and counts itself
//   in on the tile's flag; the owner waits for the count, adds the slots in CTA order to its own
//   registers, resets the flag for the next launch and stores C through v14's epilogue.
// - v22 (true): in reverse, so that the pieces walk K together (StreamKTilesPlan's aligned
//   order); every segment of a split tile stores its accumulators in its slot (two a CTA) and
//   counts itself in; the last to count (told by bar.red.or to its whole warpgroup) resets the
//   flag, sums every slot in CTA order (v21's order, so the same bits) and stores C. No wait.
// One launch, the same bits every run.
#include "kernels/hgemm/partial_slots_sm90.cuh"
#include "kernels/hgemm/stream_k_plan.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"
#include "klab/device/flag.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/tile_order.hpp"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace stream_k_tiles {

struct Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Stage = WgmmaStage</*block*/ 128, 256>;
  static constexpr int kStages = v18_stages(256), kGroupM = 16;
  static constexpr int kStoreSlots = v18_store_slots(256);  // per consumer warpgroup
  static constexpr int kStoreBytes = kConsumerWarps / 4 * kStoreSlots * int(WgmmaStoreBox::kBytes);
  /// v14's and v18's layout: the ring (1024-byte aligned), the store slots, then the barriers.
  static constexpr int kSmemBytes = v18_smem_bytes(256);
  static_assert(kSmemBytes == 1024 + kStages * int(Stage::kBytes) + kStoreBytes + 2 * kStages * 8);
  static_assert(Stage::kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer");
  /// A workspace slot (v21: one a CTA; v22: two): its two warpgroups' 64 x 256 fp32
  /// accumulators.
  static constexpr int kSlotFloats = kConsumerWarps / 4 * 64 * Stage::kBlockN;
};

/// One unit of a CTA's work: k-tiles k_begin .. k_end - 1 of tile (tm, tn); sk: its stream-K
/// tile (-1 for a whole-wave tile).
struct Work {
  int tm, tn, k_begin, k_end, sk;
};

/// Calls fn(Work) for CTA `cta`'s units in order: its stream-K piece's segments (kAligned: in
/// reverse), then its whole-wave tiles (producer and consumers walk the same list).
template <int kGroupM, bool kAligned, class Fn>
__device__ __forceinline__ void for_each_work(const StreamKTilesPlan& plan, int cta, int tiles_m,
                                              int tiles_n, Fn&& fn) {
  const int k_tiles = plan.line.k_tiles;
  if (cta < plan.line.ctas) {
    const int first = plan.first_tile(cta), last = plan.last_tile(cta);
    for (int s = kAligned ? last : first; kAligned ? s >= first : s <= last;
         s += kAligned ? -1 : 1) {
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

template <class Cfg, class T, bool kAligned>
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
      for_each_work<Cfg::kGroupM, kAligned>(plan, cta, tiles_m, tiles_n, [&](const Work& w) {
        produce_wgmma_k_tiles<Stage>(slot, smem, &a_map, &b_map, full, empty, w.tm, w.tn, w.k_begin,
                                     w.k_end);
      });
    }
  } else {  // a consumer warpgroup: rows 64 wg .. 64 wg + 63 of each unit's tile
    device::setmaxnreg_inc<Cfg::kConsumerRegs>();
    unsigned char* my_slots = store_slots + wg * Cfg::kStoreSlots * WgmmaStoreBox::kBytes;
    const int t = device::warpgroup_thread(), barrier = 1 + wg;  // the warpgroup's named barrier
    device::RingSlot<kStages> slot;
    for_each_work<Cfg::kGroupM, kAligned>(plan, cta, tiles_m, tiles_n, [&](const Work& w) {
      float acc[1][kN / 2];
#pragma unroll
      for (int j = 0; j < kN / 2; ++j) acc[0][j] = 0.f;
      consume_wgmma_stages<Stage, T>(acc, device::smem_addr(smem), full, empty, slot,
                                     w.k_end - w.k_begin, wg);
      const bool whole = w.k_begin == 0 && w.k_end == plan.line.k_tiles;
      if constexpr (kAligned) {
        if (!whole) {  // every segment: its slot, the count; the last to count sums them all
          auto slot_of = [&](int c) {
            return slot_half<kN>(
                partials + size_t(2 * c + plan.aligned_slot(c, w.sk)) * Cfg::kSlotFloats, wg);
          };
          store_slot<kN>(slot_of(cta), acc[0], t);
          __threadfence();  // the slot before the count, device-wide
          device::named_barrier_sync(barrier, device::kWarpgroupThreads);
          bool last = false;
          if (t == 0) {
            int* flag = &flags[w.sk * kWgs + wg];
            last = atomicAdd(flag, 1) == plan.segments(w.sk) - 1;
            if (last) *flag = 0;  // every segment has counted: the next launch starts from zero
          }
          if (!device::named_barrier_or(barrier, device::kWarpgroupThreads, last)) return;
          __threadfence();  // the other segments' slots after their counts
          // CTA order from the first (k-tile 0's) segment: v21's sum, the same bits.
          const int first = plan.line.first_cta(w.sk), end = first + plan.segments(w.sk);
          add_slot<kN, true>(acc[0], slot_of(first), t);
          for (int c = first + 1; c < end; ++c) add_slot<kN>(acc[0], slot_of(c), t);
        }
      } else if (!whole && w.k_begin > 0) {  // a contributor: the slot, then the count
        store_slot<kN>(slot_half<kN>(partials + size_t(cta) * Cfg::kSlotFloats, wg), acc[0], t);
        __threadfence();  // the slot before the count, device-wide
        device::named_barrier_sync(barrier, device::kWarpgroupThreads);
        if (t == 0) atomicAdd(&flags[w.sk * kWgs + wg], 1);
        return;
      } else if (!whole) {  // the owner: every contributor's slot, in CTA order, onto its own part
        int* flag = &flags[w.sk * kWgs + wg];
        if (t == 0) {
          const int expected = plan.contributors(w.sk);
          device::wait_count_at_least(flag, expected);
          *flag = 0;  // every contributor has counted: the next launch starts from zero
        }
        device::named_barrier_sync(barrier, device::kWarpgroupThreads);
        const int first = plan.owner(w.sk) + 1, last = first + plan.contributors(w.sk);
        for (int c = first; c < last; ++c)
          add_slot<kN>(acc[0], slot_half<kN>(partials + size_t(c) * Cfg::kSlotFloats, wg), t);
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

/// The kernel on g: its slots (v21: one a CTA, v22: two) at `workspace`, its flags at
/// flags_offset, on `plan`'s pieces for the grid (v21_plan; v22 the same).
template <class T, bool kAligned>
void launch(const GemmArgs<T>& g, void* workspace, size_t flags_offset, cudaStream_t stream) {
  using Cfg = Config;
  constexpr auto kKernel = wgmma_stream_k_tiles_kernel<Cfg, T, kAligned>;
  device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
  // No more than a wave of this kernel (v21: its owners wait for later CTAs, which must be
  // resident), nor than the workspace's slots (v21_workspace_bytes and v22_workspace_bytes size
  // them for plan_sm_count()).
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

/// A rung's launch on p (v21: kAligned false, one slot a CTA; v22: true, two): its slots
/// (`slot_bytes`) at the workspace's start, v21_flag_bytes(p) of flags as its last bytes, past
/// whatever else a caller's layout (v18's) puts there; v05's element-copy kernel where the TMA
/// cannot run p.
template <bool kAligned>
void launch_rung(const char* rung, size_t slot_bytes, const Problem& p, Buffers& b,
                 const LaunchArgs& args) {
  const size_t flags = v21_flag_bytes(p);
  if (b.workspace_bytes < slot_bytes + flags)
    throw Error(std::string(rung) + ": a workspace of " + std::to_string(b.workspace_bytes) +
                " bytes, needs " + std::to_string(slot_bytes + flags));
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (g.vec16())
      launch<T, kAligned>(g, b.workspace, b.workspace_bytes - flags, stream_of(args));
    else
      launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
  });
}

}  // namespace stream_k_tiles

}  // namespace klab::hgemm

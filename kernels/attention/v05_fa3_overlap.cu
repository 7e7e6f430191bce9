// v05 fa3_overlap (sm_90a): v04's FlashAttention 3 block (a TMA producer warpgroup, two consumer
// warpgroups of 64 query rows, S = Q K^T by wgmma from swizzled shared memory, P in registers as
// the register A operand of O += P V) with FA3's two overlaps of the softmax and the tensor pipe:
// - Intra-warpgroup: a consumer issues S_j = Q K_j^T and then O += P_{j-1} V_{j-1} as two wgmma
//   groups, waits only for the first (wgmma.wait_group 1) and runs block j's mask and online
//   softmax while P_{j-1} V_{j-1} is still on the tensor pipe; then it waits for that product,
//   hands block j - 1's stage back, rescales O by block j's alpha and rounds P_j. Through the
//   softmax a thread holds O, S_j and P_{j-1}: kD / 2 + 3 kBlockN / 4 registers (fa3_schedule.hpp),
//   160 at D = 128 with 128-key blocks and 176 at D = 256 with 64-key blocks, inside the 232 of
//   setmaxnreg with room for the rest; so every D keeps v04's blocks. (Issuing S_{j+1} before
//   block j's softmax instead would hold two S blocks: 224 at D = 128 before anything else.)
// - Ping-pong between the two consumers: before a round's wgmma a warpgroup waits on its named
//   barrier (bar.sync), after issuing them it arrives on the other's (bar.arrive), so the two
//   warpgroups' rounds reach the tensor pipe alternately and one's softmax runs under the other's
//   GEMMs. The barrier ids, the opening arrive and the balanced last round are in
//   fa3_schedule.hpp, modelled on the CPU.
// - A three-stage K/V ring at D = 64 and 128 (two at D = 256, where a third does not fit beside
//   Q): a stage is now handed back one round later than in v04 (after the P V that overlaps the
//   next softmax), so a third stage keeps one whole block of loads in flight ahead of the S that
//   needs it.
// The producer, the block's setup, the GEMM issue, mask, softmax step, epilogue and the host side
// are v04's (fa3_kernel.cuh); only the consumer loop and the ring depth change.
// Expected bottleneck: the softmax's exp2 on the MUFU and the FMA of the rescale now overlap the
// other warpgroup's GEMMs; what remains is the tensor pipe itself plus the rounds that cannot
// overlap (each tile's first S and last P V), the masked diagonal blocks of causal tiles, the
// named-barrier handoffs, and O's stores from registers at the end of a tile (no persistent
// scheduler yet: a tile's epilogue does not overlap the next tile's loads).
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 570-630
// TFLOP/s, 1.07-1.19x v04's 531 and 0.96-1.06x cuDNN's 594 in 2026-12-02_6fda6f1_fa3_decode_v04
// (FA3's paper gains about 15% from the two overlaps together at D = 128). Not measured yet.
// Requirements: v04's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O; hq and b up
// to 65535).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_schedule.hpp"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

/// Three stages where they fit beside Q, two at D = 256.
template <int kD>
using V05Config = fa3::Config<kD, /*stages*/ kD == 256 ? 2 : 3>;

template <int kD>
inline constexpr bool kV05Fits = fa3::overlap_fits(kD, V05Config<kD>::kBlockN,
                                                   V05Config<kD>::kConsumerRegs);
static_assert(kV05Fits<64> && kV05Fits<128> && kV05Fits<256>);

/// The ping-pong's wait before a round's wgmma.
__device__ __forceinline__ void pingpong_wait(int wg) {
  device::named_barrier_sync(fa3::pingpong_wait_id(wg), fa3::kPingPongThreads);
}
/// The ping-pong's arrive after round `round` of `rounds`.
__device__ __forceinline__ void pingpong_pass(int wg, int round, int rounds) {
  if (fa3::pingpong_arrives_after(wg, round, rounds))
    device::named_barrier_arrive(fa3::pingpong_arrive_id(wg), fa3::kPingPongThreads);
}

/// The rung as fa3_kernel.cuh's kernel takes it.
struct V05 {
  static constexpr const char* kName = "attention.v05";
  template <int kD>
  using Config = V05Config<kD>;

  /// A consumer warpgroup (wg 0 or 1): rows n0 + 64 wg .. + 63 of the tile in rounds
  /// (fa3_schedule.hpp), then its O rows and their lse.
  template <class C, class T, int kD>
  __device__ __forceinline__ static void consume(unsigned char* smem,
                                                 const fa3::Barriers<C::kStages>& bars,
                                                 const fa3::TileOf& t, int wg, T* __restrict__ o,
                                                 float* __restrict__ lse, const Geometry& g) {
    constexpr int kBlockN = C::kBlockN;
    const fa3::ConsumerThread th(t, wg);
    const uint32_t s_base = device::smem_addr(smem);
    const int n = int(t.blocks.count);

    QuadRow rows[2];    // the two rows' running max (log2 units) and this lane's share of the sum
    float acc[kD / 2];  // O: 64 x kD over the warpgroup
#pragma unroll
    for (int i = 0; i < kD / 2; ++i) acc[i] = 0.f;

    if (n > 0) {  // both consumers see the same n: the ping-pong's barriers stay balanced
      float sc[kBlockN / 2];         // S of the block being softmaxed
      uint32_t pa[kBlockN / 16][4];  // P of the block before it, the A operand in flight
      device::mbarrier_wait(bars.full_q, 0);
      if (fa3::pingpong_opens(wg))
        device::named_barrier_arrive(fa3::pingpong_arrive_id(wg), fa3::kPingPongThreads);

      // Round 0: S of the first block visited (the last key block), alone.
      device::RingSlot<C::kStages> prev;
      device::mbarrier_wait(&bars.full_k[prev.index], prev.phase);
      pingpong_wait(wg);
      device::wgmma_fence();
      fa3::issue_s<C, T, kD>(sc, s_base, wg, prev.index);
      device::wgmma_commit_group();
      pingpong_pass(wg, 0, n);
      device::wgmma_wait_group<0>();
      device::wgmma_fence_operands(sc);
      {
        const int jb = n - 1;
        if (jb >= t.blocks.unmasked) fa3::mask_block<kBlockN>(sc, jb, th, g);
        float alpha[2];  // O is still 0: nothing to rescale
        fa3::softmax_block<kBlockN>(sc, rows, g.scale_log2, alpha);
        fa3::p_registers<kBlockN, T>(sc, pa);
      }

      // Rounds 1 .. n - 1: S of this block, P V of the one before, this block's softmax under it.
      for (int it = 1; it < n; ++it) {
        const device::RingSlot<C::kStages> cur = prev.next();
        const int jb = n - 1 - it;
        device::mbarrier_wait(&bars.full_k[cur.index], cur.phase);
        device::mbarrier_wait(&bars.full_v[prev.index], prev.phase);
        pingpong_wait(wg);
        device::wgmma_fence();
        fa3::issue_s<C, T, kD>(sc, s_base, wg, cur.index);
        device::wgmma_commit_group();
        fa3::issue_pv<C, T, kD>(acc, pa, s_base, prev.index);
        device::wgmma_commit_group();
        pingpong_pass(wg, it, n);

        device::wgmma_wait_group<1>();  // S done; P V may still run
        device::wgmma_fence_operands(sc);
        if (jb >= t.blocks.unmasked) fa3::mask_block<kBlockN>(sc, jb, th, g);
        float alpha[2];
        fa3::softmax_block<kBlockN>(sc, rows, g.scale_log2, alpha);

        device::wgmma_wait_group<0>();  // P V done: O may be rescaled, P and the stage reused
        device::wgmma_fence_operands(acc);
        fa3::fence_p<kBlockN>(pa);
        // Every wgmma of this warp that read the previous stage (its S and its P V) is done.
        if (th.lane == 0) device::mbarrier_arrive(&bars.empty[prev.index]);
        fa3::rescale_o<kD>(acc, alpha);
        fa3::p_registers<kBlockN, T>(sc, pa);
        prev = cur;
      }

      // The last block's P V, outside the ping-pong.
      device::mbarrier_wait(&bars.full_v[prev.index], prev.phase);
      device::wgmma_fence();
      fa3::issue_pv<C, T, kD>(acc, pa, s_base, prev.index);
      device::wgmma_commit_group();
      device::wgmma_wait_group<0>();
      device::wgmma_fence_operands(acc);
      fa3::fence_p<kBlockN>(pa);
      if (th.lane == 0) device::mbarrier_arrive(&bars.empty[prev.index]);
    }
    fa3::store_rows<T, kD>(acc, rows, th, t, o, lse, g);
  }
};

}  // namespace

Variant gpu_v05_fa3_overlap() {
  return fa3::variant<V05>(
      "attention.v05_fa3_overlap",
      "FA3 with its two overlaps: v04's block, each consumer's softmax of block j under its own "
      "P V of block j - 1 (wgmma.wait_group 1), the two consumers' GEMMs alternated by named "
      "barriers (ping-pong), three-stage K/V ring at D <= 128");
}

}  // namespace klab::attention

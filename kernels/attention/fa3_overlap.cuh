#pragma once
// The consumer side of FA3's two overlaps (attention v05, and v06 which runs it on a persistent
// schedule): one consumer warpgroup's pass over one tile in rounds, its softmax of block j under
// its own P_{j-1} V_{j-1} (wgmma.wait_group 1), its rounds alternated with the other consumer's
// by the ping-pong's named barriers, K handed back once S has read it and V once P V has
// (fa3_schedule.hpp holds the order, modelled on the CPU).
#include <type_traits>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_schedule.hpp"

namespace klab::attention::fa3 {

/// The ping-pong's wait before a round's wgmma.
__device__ __forceinline__ void pingpong_wait(int wg) {
  device::named_barrier_sync(pingpong_wait_id(wg), kPingPongThreads);
}
/// The ping-pong's arrive on the next warpgroup's barrier (of `consumers`) after a round's wgmma
/// (and the last warpgroup's opening one).
__device__ __forceinline__ void pingpong_arrive(int wg, int consumers = kConsumerWarpgroups) {
  device::named_barrier_arrive(pingpong_arrive_id(wg, consumers), kPingPongThreads);
}

/// How a consumer's tiles meet the ping-pong. kPerTile (v05, one tile a block): every tile
/// opens and closes its own alternation (pingpong_arrives_after). Across tiles (v06): the
/// alternation runs on from one tile's rounds to the next's, opened once a block and closed once
/// when the consumers leave (pingpong_closes).
enum class PingPong { kPerTile, kAcrossTiles };

/// The consumer's place in the K/V ring: the slot of the next key block it reads (K and V of a
/// block share a slot index and lap; only their barriers differ).
template <int kStages>
using ConsumerRing = device::RingSlot<kStages>;

/// Q's warpgroup index for its descriptors (both consumer loops): at D = 64 through a shuffle
/// from lane 0, which makes it warp-uniform to ptxas (from threadIdx it is not), so that Q's
/// descriptors are uniform registers, not general ones copied over before each wgmma (R2UR). At
/// D = 64 it gave the three- and two-consumer kernels 0.1-0.9%
/// (2026-12-06_9527110_attention_q_uniform_d64); at D = 128 the same change re-allocated v20's
/// registers and schedule and cost it 1.1-1.3% (af85b52's run): there the index stays as it is.
template <int kD>
__device__ __forceinline__ int q_warpgroup(int wg) {
  if constexpr (kD <= 64) return __shfl_sync(0xffffffffu, wg, 0);
  return wg;
}

/// Consumer warpgroup wg's pass over tile t (rows n0 + 64 wg .. + 63): its rounds (Q already
/// landed), its O rows and their lse. ring: where the tile's first key block sits, advanced past
/// its last. kReleaseQ: hand Q back (empty_q) once the tile's last S is done (v06 reloads Q for
/// the next tile under this one's last P V and epilogue), or, with kTmaStoreO (v17), once the
/// TMA store has read O out of the warpgroup's rows of Q. Opt: the softmax's options
/// (SoftmaxOptions; v07 and v08 take FlashAttention 4's). kQHalves (v18): Q is handed back by
/// halves, each warpgroup its own rows (empty_q_half(wg)). kTrimFirstBlock (v19): the
/// warpgroup's rows see no key in the second half of the first block visited (fa3_tile.hpp's
/// first_half_only: the causal diagonal's block for the first warpgroup at Nq = Nkv; the caller
/// decides), and that block's S runs over its first half only.
template <class C, class T, int kD, PingPong kPingPong, bool kReleaseQ, class Opt = ExactSoftmax,
          bool kTmaStoreO = false, bool kQHalves = false, bool kTrimFirstBlock = false>
__device__ __forceinline__ void consume_tile(unsigned char* smem, const Barriers<C::kStages>& bars,
                                             const TileOf& t, int wg,
                                             ConsumerRing<C::kStages>& ring,
                                             OutputOf<T>* __restrict__ o, float* __restrict__ lse,
                                             const Geometry& g,
                                             const CUtensorMap* o_map = nullptr) {
  static_assert(C::kKvLag == kOverlapKvLag, "the producer's order is the rounds' (K_j, V_{j-1})");
  // kTmaStoreO (v16, v17): O leaves through the warpgroup's rows of Q's tile, so Q is handed
  // back (kReleaseQ) only after the store has read them; in 16-bit elements (no FP8 scale or max
  // offset); its barrier (o_ready_id) shares its ids with the shared-memory P's (p_ready_id).
  static_assert(!kTmaStoreO || (!kIsFp8<T> && Opt::kMaxOffset == 0 && !C::kPInSmem));
  constexpr bool kQAfterLastS = kReleaseQ && !kTmaStoreO;  // Q handed back under the last P V
  static_assert(!kQHalves || (kReleaseQ && kTmaStoreO), "v18: each half back after its store");
  uint64_t* const empty_q = kQHalves ? bars.empty_q_half(wg) : bars.empty_q;
  constexpr int kBlockN = C::kBlockN;
  constexpr bool kSmemP = C::kPInSmem;  // P V's A from the warpgroup's shared tile (v11)
  static_assert(C::kIntraWgOverlap, "v22's rounds are consume_tile_serial's");
  static_assert(!kTrimFirstBlock || (!kSmemP && !kIsFp8<T>), "v19: 16-bit P in registers");
  // e4m3 (v12): Q's and K's scales join the softmax's, V's the epilogue's.
  float scale_log2 = g.scale_log2, o_scale = 1.f;
  if constexpr (kIsFp8<T>) {
    scale_log2 *= *g.q_scale * *g.k_scale;
    o_scale = *g.v_scale;
  }
  const ConsumerThread th(t, wg);
  const uint32_t s_base = device::smem_addr(smem);
  const uint32_t pin = device::smem_addr(&bars.pin[wg * 4 + th.tid / 32]);  // this warp's word
  const int wg_q = q_warpgroup<kD>(wg);
  const int n = int(t.blocks.count), unmasked = int(t.blocks.unmasked);
  // Round `round` of the tile's n: whether wg arrives on the other's barrier after it.
  constexpr int kWgs = C::kConsumerWarpgroups;
  auto pass = [&](int round) {
    if (kPingPong == PingPong::kAcrossTiles || pingpong_arrives_after(wg, round, n, kWgs))
      pingpong_arrive(wg, kWgs);
  };

  QuadRow rows[2];    // the two rows' running max (log2 units) and this lane's share of the sum
  float acc[kD / 2];  // O: 64 x kD over the warpgroup
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) acc[i] = 0.f;

  if (n > 0) {              // both consumers see the same n: the ping-pong's barriers stay balanced
    float sc[kBlockN / 2];  // S of the block being softmaxed
    uint32_t pa[kPSteps<T, kBlockN>][4];  // P of the block before it, the A operand (RS)
    // P of the softmaxed block as the next P V's A operand: in registers, or stored into the
    // warpgroup's shared tile (the next round's ping-pong wait, or the barrier before the last
    // P V, makes every warp's stores visible before a wgmma reads them).
    auto make_p = [&] {
      if constexpr (kSmemP)
        store_p<C, T>(sc, s_base, wg, th.tid);
      else
        p_registers<kBlockN, T>(sc, pa);
    };
    // P V of a trimmed block runs whole: its second half's weights are 0. (Trimmed to its first
    // half too, as v19 first did, the branch inside the rounds' loop made ptxas insert a
    // warpgroup arrive before every P V, C7519, and v19 ran at 0.69x v16 even where nothing was
    // trimmed: 2026-12-04_44c7838_attention_v19_uniform.)
    auto issue_p_v = [&](int stage) {
      if constexpr (kSmemP)
        issue_pv_smem<C, T, kD>(acc, s_base, wg, stage);
      else
        issue_pv<C, T, kD>(acc, pa, s_base, stage);
    };
    auto hold_p = [&] {
      if constexpr (!kSmemP) fence_p(pa);
    };
    if (kPingPong == PingPong::kPerTile && pingpong_opens(wg, kWgs)) pingpong_arrive(wg, kWgs);

    // Round 0: S of the first block visited (the last key block), alone; over its first half of
    // keys only with kTrimFirstBlock (no branch around a wgmma here: ptxas would serialize them).
    ConsumerRing<C::kStages> prev = ring;
    device::mbarrier_wait(&bars.full_k[prev.index], prev.phase);
    pingpong_wait(wg);
    device::wgmma_fence();
    issue_s<C, T, kD, kTrimFirstBlock ? kBlockN / 2 : kBlockN>(sc, s_base, wg_q, prev.index);
    device::wgmma_commit_group();
    pass(0);
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(sc);
    if constexpr (kTrimFirstBlock) {  // the second half's scores: no key these rows see
#pragma unroll
      for (int i = kBlockN / 4; i < kBlockN / 2; ++i) sc[i] = -INFINITY;
    }
    release(&bars.empty_k[prev.index], th.lane);  // S_0 has read K_0
    if (kQAfterLastS && n == 1) release(empty_q, th.lane);
    {
      const int jb = n - 1;
      if (jb >= unmasked) mask_block<kBlockN>(sc, jb, th, g);
      float alpha[2];  // O is still 0: nothing to rescale
      softmax_block<kBlockN, Opt>(sc, rows, scale_log2, alpha);
      make_p();
    }

    // Rounds 1 .. n - 1: S of this block, P V of the one before, this block's softmax under it.
    for (int it = 1; it < n; ++it) {
      const ConsumerRing<C::kStages> cur = prev.next();
      const int jb = n - 1 - it;
      device::mbarrier_wait(&bars.full_k[cur.index], cur.phase);
      device::mbarrier_wait(&bars.full_v[prev.index], prev.phase);
      pingpong_wait(wg);
      device::wgmma_fence();
      issue_s<C, T, kD>(sc, s_base, wg_q, cur.index);
      device::wgmma_commit_group();
      issue_p_v(prev.index);
      device::wgmma_commit_group();
      pass(it);

      device::wgmma_wait_group<1>();  // S done; P V may still run
      device::wgmma_fence_operands(sc);
      // K of this block is read: the producer may refill its slot under this round (with
      // Opt::kMaxFree once the softmax is past the rare case that reads K and Q again).
      auto release_k = [&] {
        release(&bars.empty_k[cur.index], th.lane);
        if (kQAfterLastS && it == n - 1) release(empty_q, th.lane);
      };
      // At D = 256 (64-key blocks: a max tree 4 deep) the recompute's loads made ptxas spill.
      constexpr bool kMaxFree = Opt::kMaxFree && kD <= 128;
      if constexpr (!kMaxFree) release_k();
      float alpha[2];
      bool rescale;
      auto softmax_masked = [&] {
        if (jb >= unmasked) mask_block<kBlockN>(sc, jb, th, g);
        rescale = softmax_block<kBlockN, Opt>(sc, rows, scale_log2, alpha);
      };
      if constexpr (kMaxFree) {
        // softmax_block's path (one call, so one inlined copy): the masked blocks and
        // max_free_block's rare cases.
        bool whole = jb >= unmasked, lost = false;
        if (!whole) {
          const MaxFree f = max_free_block<kBlockN>(sc, rows, scale_log2, alpha);
          rescale = f == MaxFree::kRescaled;
          lost = f == MaxFree::kScoresLost;
          if (lost) recompute_s<C, T, kD>(sc, smem, wg_q, cur.index, th.tid);
          whole = lost || f == MaxFree::kUnseen;  // kUnseen: see MaxFree
        }
        if (whole) softmax_masked();
        if (lost) __syncwarp();  // every lane's reads of K before lane 0 hands the slot back
        release_k();
      } else {
        softmax_masked();
      }
      // The row sums need every exponential of the block: stored, they hold the whole softmax
      // above the wait below (ptxas would otherwise run it after P V is done).
      if (th.lane == 0) device::keep_before_wgmma_wait(pin, rows[0].l + rows[1].l);

      device::wgmma_wait_group<0>();  // P V done: O may be rescaled, P and V's slot reused
      device::wgmma_fence_operands(acc);
      hold_p();
      release(&bars.empty_v[prev.index], th.lane);
      if (rescale) scale_rows<kD>(acc, alpha);
      make_p();  // P V of the block before has read the shared tile: it may be overwritten
      prev = cur;
    }

    // The last block's P V, outside the ping-pong.
    device::mbarrier_wait(&bars.full_v[prev.index], prev.phase);
    if constexpr (kSmemP) device::named_barrier_sync(p_ready_id(wg), device::kWarpgroupThreads);
    device::wgmma_fence();
    issue_p_v(prev.index);
    device::wgmma_commit_group();
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(acc);
    hold_p();
    release(&bars.empty_v[prev.index], th.lane);
    ring = prev.next();
  } else if (kQAfterLastS) {
    release(empty_q, th.lane);  // no S reads this tile's Q
  }
  if constexpr (kTmaStoreO) {
    store_rows_tma<C, T, kD, kPingPong == PingPong::kAcrossTiles>(acc, rows, th, t, wg, smem, o_map,
                                                                  lse, g);
    if constexpr (kReleaseQ) {
      // Thread 0 has waited until the store read the rows: then every warp hands Q back.
      device::named_barrier_sync(o_ready_id(wg), device::kWarpgroupThreads);
      release(empty_q, th.lane);
    }
  } else
    store_rows<OutputOf<T>, kD>(acc, rows, th, t, o, lse, g, o_scale,
                                float(Opt::kMaxOffset) * kLn2);
}

/// The overlapped rungs' configuration (v05, v06, v07, v08): three stages where they fit beside
/// Q, two at D = 256; V loaded one block behind K.
template <int kD>
using OverlapConfig = Config<kD, /*stages*/ kD == 256 ? 2 : 3, kOverlapKvLag>;
static_assert(overlap_fits(64, OverlapConfig<64>::kBlockN, OverlapConfig<64>::kConsumerRegs) &&
              overlap_fits(128, OverlapConfig<128>::kBlockN, OverlapConfig<128>::kConsumerRegs) &&
              overlap_fits(256, OverlapConfig<256>::kBlockN, OverlapConfig<256>::kConsumerRegs));

/// Consumer warpgroup wg's pass over a one-tile block's tile t without the intra-warpgroup
/// overlap (v22, FlashAttention 3's loop where its tile leaves no registers for P in flight; Q
/// already landed): per key block, S alone in the ping-pong's turn, waited for; K handed back;
/// the softmax; P into registers; P V, waited for; V handed back. S and O (S's wgmma), then P
/// and O (P V's), are all a round holds in flight: never S and P together. Then its O rows and
/// their lse.
template <class C, class T, int kD, class Opt>
__device__ __forceinline__ void consume_tile_serial(unsigned char* smem,
                                                    const Barriers<C::kStages>& bars,
                                                    const TileOf& t, int wg, T* __restrict__ o,
                                                    float* __restrict__ lse, const Geometry& g) {
  static_assert(!kIsFp8<T> && !C::kPInSmem && C::kKvLag == 0, "16-bit P in registers, V with K");
  constexpr int kBlockN = C::kBlockN, kWgs = C::kConsumerWarpgroups;
  const ConsumerThread th(t, wg);
  const uint32_t s_base = device::smem_addr(smem);
  const int wg_q = q_warpgroup<kD>(wg);
  const int n = int(t.blocks.count), unmasked = int(t.blocks.unmasked);
  QuadRow rows[2];    // the two rows' running max (log2 units) and this lane's share of the sum
  float acc[kD / 2];  // O: 64 x kD over the warpgroup
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) acc[i] = 0.f;
  if (n > 0 && pingpong_opens(wg, kWgs)) pingpong_arrive(wg, kWgs);
  ConsumerRing<C::kStages> slot;
  for (int it = 0; it < n; ++it, slot = slot.next()) {
    const int jb = n - 1 - it;
    float sc[kBlockN / 2];
    device::mbarrier_wait(&bars.full_k[slot.index], slot.phase);
    pingpong_wait(wg);
    device::wgmma_fence();
    issue_s<C, T, kD>(sc, s_base, wg_q, slot.index);
    device::wgmma_commit_group();
    if (pingpong_arrives_after(wg, it, n, kWgs)) pingpong_arrive(wg, kWgs);
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(sc);
    release(&bars.empty_k[slot.index], th.lane);
    if (jb >= unmasked) mask_block<kBlockN>(sc, jb, th, g);
    float alpha[2];
    // Round 0: O is still 0, nothing to rescale.
    if (softmax_block<kBlockN, Opt>(sc, rows, g.scale_log2, alpha) && it > 0)
      scale_rows<kD>(acc, alpha);
    uint32_t pa[kBlockN / 16][4];
    p_registers<kBlockN, T>(sc, pa);
    device::mbarrier_wait(&bars.full_v[slot.index], slot.phase);
    device::wgmma_fence();
    issue_pv<C, T, kD>(acc, pa, s_base, slot.index);
    device::wgmma_commit_group();
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(acc);
    fence_p(pa);
    release(&bars.empty_v[slot.index], th.lane);
  }
  store_rows<T, kD>(acc, rows, th, t, o, lse, g);
}

/// A one-tile block's consumer warpgroup (wg 0 or 1) on the overlapped loop (v05, v07, v08):
/// rows n0 + 64 wg .. + 63 of the block's tile in rounds, then its O rows and their lse.
/// kTmaStoreO (v16): O stored through shared memory by TMA (o_map), store_rows_tma. kTrimDiagonal
/// (v19): where the warpgroup's rows see no key in the second half of the tile's first block,
/// its consume_tile with kTrimFirstBlock, else without: two copies of the rounds, chosen once a
/// tile, since a branch between the two S forms inside one copy made ptxas serialize every
/// wgmma of the kernel (2026-12-04_c64a56d_attention_v19_s_only).
template <class C, class T, int kD, class Opt, bool kTmaStoreO = false, bool kTrimDiagonal = false>
__device__ __forceinline__ void consume_one_tile(unsigned char* smem,
                                                 const Barriers<C::kStages>& bars, const TileOf& t,
                                                 int wg, OutputOf<T>* __restrict__ o,
                                                 float* __restrict__ lse, const Geometry& g,
                                                 const CUtensorMap* o_map = nullptr) {
  if (t.blocks.count > 0) device::mbarrier_wait(bars.full_q, 0);
  ConsumerRing<C::kStages> ring;
  auto consume = [&]<bool kTrim>() {
    consume_tile<C, T, kD, PingPong::kPerTile, /*release Q*/ false, Opt, kTmaStoreO,
                 /*Q halves*/ false, kTrim>(smem, bars, t, wg, ring, o, lse, g, o_map);
  };
  if constexpr (kTrimDiagonal) {
    // wg through a shuffle from lane 0: warp-uniform to ptxas (from threadIdx it is not).
    const int n = int(t.blocks.count);
    if (n > 0 && first_half_only(g.nq, g.nkv, g.causal, t.n0 + 64 * __shfl_sync(~0u, wg, 0), 64,
                                 n - 1, C::kBlockN))
      return consume.template operator()<true>();
  }
  consume.template operator()<false>();
}

/// Three consumer warpgroups at D = 64 (v09, v10: 192-row tiles, setmaxnreg 24 / 160), the
/// overlapped rungs' configuration at D = 128 and 256 (three would leave 160 registers for O's 64
/// or 128).
template <int kD>
using ThreeConsumerConfig =
    std::conditional_t<kD == 64, Config<64, 3, kOverlapKvLag, 3>, OverlapConfig<kD>>;

/// v11 at non-causal problems: at D = 64, v09's three consumers on kWideKeys-key blocks with P
/// V's A from shared memory; v09's configuration at D = 128 and 256.
template <int kD>
using WideKeyConfig =
    std::conditional_t<kD == 64, Config<64, kWideStages, kOverlapKvLag, 3, kWideKeys, true>,
                       ThreeConsumerConfig<kD>>;
// No more live registers than v09's 128-key blocks with P in registers (128 of 160).
static_assert(overlap_live_registers(64, kWideKeys, /*P in smem*/ true) <=
              overlap_live_registers(64, ThreeConsumerConfig<64>::kBlockN));

/// v22 at non-causal problems: at D = 64, v09's three consumers on kSerialKeys-key blocks with P
/// in registers and no intra-warpgroup overlap (consume_tile_serial; FlashAttention 3's tile
/// there), V loaded with its K; v09's configuration at D = 128 and 256.
template <int kD>
using SerialWideKeyConfig = std::conditional_t<
    kD == 64,
    Config<64, kSerialStages, /*V with K*/ 0, kSerialConsumers, kSerialKeys, /*P in smem*/ false,
           /*intra-warpgroup overlap*/ false>,
    ThreeConsumerConfig<kD>>;
// O and S take no more registers than v09's O, S and P (128 of 160 with three consumers), or fit
// a budget with the usual allowance.
static_assert(serial_live_registers(64, kSerialKeys) <=
                  overlap_live_registers(64, ThreeConsumerConfig<64>::kBlockN) ||
              serial_fits(64, kSerialKeys, SerialWideKeyConfig<64>::kConsumerRegs));

/// v23 at non-causal problems: at D = 64, the overlapped loop of two consumers on
/// kTwoConsumerKeys-key blocks with P V's A from shared memory (v11's path); the overlapped
/// rungs' configuration at D = 128 and 256.
template <int kD>
using TwoConsumerWideKeyConfig = std::conditional_t<
    kD == 64,
    Config<64, kTwoConsumerStages, kOverlapKvLag, 2, kTwoConsumerKeys, /*P in smem*/ true>,
    OverlapConfig<kD>>;
// O and S (32 + 128) with the usual allowance fit two consumers' 232 registers.
static_assert(overlap_fits(64, kTwoConsumerKeys, TwoConsumerWideKeyConfig<64>::kConsumerRegs,
                           /*P in smem*/ true));

/// A one-tile-per-block rung on the overlapped loop with softmax options Opt and configuration
/// ConfigOf<kD> (OverlapConfig by default; NonCausalConfigOf<kD> at non-causal problems), as
/// fa3_kernel.cuh's kernel takes it (Name: a type with the rung's kName).
template <class Name, class Opt, template <int> class ConfigOf = OverlapConfig,
          template <int> class NonCausalConfigOf = ConfigOf>
struct OverlapRung {
  static constexpr const char* kName = Name::kName;
  template <int kD>
  using Config = ConfigOf<kD>;
  template <int kD>
  using NonCausalConfig = NonCausalConfigOf<kD>;
  template <class C, class T, int kD>
  __device__ __forceinline__ static void consume(unsigned char* smem,
                                                 const Barriers<C::kStages>& bars, const TileOf& t,
                                                 int wg, OutputOf<T>* __restrict__ o,
                                                 float* __restrict__ lse, const Geometry& g) {
    if constexpr (C::kIntraWgOverlap) {
      consume_one_tile<C, T, kD, Opt>(smem, bars, t, wg, o, lse, g);
    } else {  // v22's configuration
      if (t.blocks.count > 0) device::mbarrier_wait(bars.full_q, 0);
      consume_tile_serial<C, T, kD, Opt>(smem, bars, t, wg, o, lse, g);
    }
  }
};

}  // namespace klab::attention::fa3

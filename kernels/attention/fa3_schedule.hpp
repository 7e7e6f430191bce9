#pragma once
// The issue order of attention v05 (FlashAttention 3's two overlaps), host-compilable so that the
// CPU tests model it (tests/cpu/test_attention.cpp, AttentionFa3Schedule):
//
// - Rounds inside a consumer warpgroup (intra-warpgroup overlap). A tile visits n key blocks
//   (in ring order 0 .. n - 1). Round 0 issues S_0 = Q K_0^T alone; round r (1 .. n - 1) issues
//   S_r, then O += P_{r-1} V_{r-1}, waits for S_r only (wgmma.wait_group 1) and runs block r's
//   softmax while P_{r-1} V_{r-1} is still on the tensor pipe; then it waits for that product,
//   hands block r - 1's stage back and rescales O. The last P_{n-1} V_{n-1} follows the rounds.
//   Live 32-bit registers a consumer thread holds through a softmax: O (kD / 2 floats), S_r
//   (kBlockN / 2) and P_{r-1} (kBlockN / 4 packed pairs, read by the product in flight).
// - Ping-pong between the consumer warpgroups (two; three in v09 at D = 64): before each round's
//   wgmma a warpgroup waits on its own named barrier (bar.sync), after issuing it arrives on the
//   next one's (bar.arrive, cyclically), so their rounds reach the tensor pipe in turn and one
//   warpgroup's softmax runs while the others' GEMMs do. The last warpgroup opens the first
//   round of the first one with one arrive before its rounds, and leaves out its arrive after its
//   own last round, so that every bar.sync meets exactly one arrival set and no barrier is left
//   half-arrived when the block exits.
// - The K/V ring (v04 and v05 alike: a stage's K and V have their own full and empty barriers).
//   The producer's step j of a tile loads K of block j, then V of block j - lag: lag 0 is v04's
//   order (K_j, V_j: its block j reads both), lag 1 v05's (K_j, V_{j-1}: the order round j reads
//   them in). v05 hands K_j back as soon as S_j is done (after wait_group 1), V_{j-1} after its
//   P V (wait_group 0); v04 hands both back after its P V. With K back a round before V, the
//   producer can load K_{j+2} while P_{j-1} V_{j-1} and block j's softmax still run, and with V
//   one block behind K its loads come in the order the rounds read them: at D = 256 (two stages)
//   every load is issued at least a round before the S or P V that reads it (v05's first form,
//   one empty barrier per stage handed back after P V, left no load ahead there: block j + 1's K
//   could only load once round j was over).
// - The persistent rung (v06): one block per SM walks a line of tiles (query tile, query head,
//   batch). The line is cut into sections of consecutive (batch, head) pairs whose K and V fit
//   half the L2 together; inside a section the tiles go by query tile, the last (longest key
//   range, under the causal mask the heaviest) first, the section's pairs fastest. So the blocks
//   at work at any time read the K and V of one section (each pair's K and V come from DRAM about
//   once), and each block takes the next tile off an atomic counter when it finishes one: the
//   longest tiles are started first and the short ones fill the end (longest processing time
//   first), whatever each tile's time turns out to be. Ping-pong across tiles: the alternation
//   runs on from one tile to the next (opened once a block, closed once when the consumers leave).
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::attention::fa3 {

/// Consumer warpgroups of a block: two (v04-v08); the functions below take the count, v09 runs
/// three at D = 64.
inline constexpr int kConsumerWarpgroups = 2;
/// Hardware barrier ids of the ping-pong: consumer warpgroup wg waits on kPingPongBarrier0 + wg
/// (barrier 0 is __syncthreads'), for up to three consumer warpgroups.
inline constexpr int kPingPongBarrier0 = 1;
/// The barrier consumer warpgroup wg's own threads meet at before the last P V reads the P its
/// warps stored in shared memory (v11; the rounds' ping-pong waits serve the others).
KLAB_HOST_DEVICE constexpr int p_ready_id(int wg) { return kPingPongBarrier0 + 3 + wg; }
/// The barrier consumer warpgroup wg's own threads meet at once their O is staged in shared
/// memory, before one of them stores it by TMA (v16; the same ids as p_ready_id, which no rung
/// uses beside it).
KLAB_HOST_DEVICE constexpr int o_ready_id(int wg) { return p_ready_id(wg); }
/// Threads that complete one ping-pong barrier phase: the waiting warpgroup's 128 and the
/// arriving one's 128.
inline constexpr int kPingPongThreads = 2 * 128;

/// The named barrier consumer warpgroup wg waits on before issuing a round's wgmma.
KLAB_HOST_DEVICE constexpr int pingpong_wait_id(int wg) { return kPingPongBarrier0 + wg; }
/// The named barrier wg arrives on after issuing them: the next warpgroup's, of `consumers`.
KLAB_HOST_DEVICE constexpr int pingpong_arrive_id(int wg, int consumers = kConsumerWarpgroups) {
  return kPingPongBarrier0 + (wg + 1) % consumers;
}
/// Whether wg arrives once before its first round (the last warpgroup, opening the first's).
KLAB_HOST_DEVICE constexpr bool pingpong_opens(int wg, int consumers = kConsumerWarpgroups) {
  return wg == consumers - 1;
}
/// Whether wg arrives after its round `round` of `rounds` (all but the last warpgroup's last).
KLAB_HOST_DEVICE constexpr bool pingpong_arrives_after(int wg, int round, int rounds,
                                                       int consumers = kConsumerWarpgroups) {
  return !(wg == consumers - 1 && round == rounds - 1);
}
/// Across tiles (v06) every round is followed by an arrive, and the first warpgroup, the one the
/// opening arrive was for, waits once more when the consumers leave: the last warpgroup's arrive
/// after its last round is that wait's.
KLAB_HOST_DEVICE constexpr bool pingpong_closes(int wg) { return wg == 0; }

/// What round r of a tile with n key blocks issues: S of block s_block (always), then P V of
/// block pv_block (-1: none, round 0). The final P_{n-1} V_{n-1} is not part of a round.
struct Round {
  int s_block, pv_block;
};
KLAB_HOST_DEVICE constexpr Round overlap_round(int r) { return {r, r - 1}; }

/// What the producer loads at step j (0 .. kv_steps - 1) of a tile of n key blocks, in visit
/// order (-1: nothing): K of block k_block, then V of block v_block.
struct KvStep {
  int k_block, v_block;
};
KLAB_HOST_DEVICE constexpr int kv_steps(int n, int lag) { return n == 0 ? 0 : n + lag; }
KLAB_HOST_DEVICE constexpr KvStep kv_step(int j, int n, int lag) {
  return {j < n ? j : -1, j >= lag && j - lag < n ? j - lag : -1};
}
/// v05's order: V one block behind K.
inline constexpr int kOverlapKvLag = 1;

/// 32-bit registers a consumer thread keeps live through a softmax under the overlap (above):
/// O, S, and P in flight as the A operand unless P V reads it from shared memory (v11).
KLAB_HOST_DEVICE constexpr int overlap_live_registers(int d, int block_n, bool p_in_smem = false) {
  return d / 2 + block_n / 2 + (p_in_smem ? 0 : block_n / 4);
}
/// The same through a softmax without the intra-warpgroup overlap (v22): the round's P V has
/// been waited for, so O and S alone (P is made from S after the softmax, S's registers dying
/// as P's fill).
KLAB_HOST_DEVICE constexpr int serial_live_registers(int d, int block_n) {
  return d / 2 + block_n / 2;
}
/// An allowance for the rest of a consumer thread (row state, addresses, descriptors, the
/// softmax's temporaries, loop state): the budget's assumption, which ptxas's report of no local
/// memory for every instantiation is the check of.
inline constexpr int kConsumerOverheadRegisters = 48;
/// Whether v22's rounds without the overlap fit a consumer thread's budget `consumer_regs`.
KLAB_HOST_DEVICE constexpr bool serial_fits(int d, int block_n, int consumer_regs) {
  return serial_live_registers(d, block_n) + kConsumerOverheadRegisters <= consumer_regs;
}
/// Whether the overlap fits a consumer thread's setmaxnreg budget `consumer_regs`.
KLAB_HOST_DEVICE constexpr bool overlap_fits(int d, int block_n, int consumer_regs,
                                             bool p_in_smem = false) {
  return overlap_live_registers(d, block_n, p_in_smem) + kConsumerOverheadRegisters <=
         consumer_regs;
}

/// The persistent rung's line of tiles (see above). Pairs p = bi * heads + h (query heads of one
/// KV head adjacent); `section` pairs a section (the last may be shorter).
struct TileLine {
  int64_t m_tiles, heads, batch, section;

  struct Tile {
    int64_t m_tile;
    int h, bi;
  };
  KLAB_HOST_DEVICE constexpr int64_t pairs() const { return heads * batch; }
  KLAB_HOST_DEVICE constexpr int64_t tiles() const { return m_tiles * pairs(); }
  /// Tile t of the line (0 <= t < tiles()).
  KLAB_HOST_DEVICE constexpr Tile at(int64_t t) const {
    const int64_t per_section = section * m_tiles;
    const int64_t sec = t / per_section, first = sec * section;
    const int64_t size = pairs() - first < section ? pairs() - first : section;
    const int64_t u = t - sec * per_section;
    const int64_t p = first + u % size;
    return {m_tiles - 1 - u / size, int(p % heads), int(p / heads)};
  }
};

/// v20's line: TileLine's sections with the shorter one (pairs % section, when not 0) first
/// instead of last, so that the line ends on a whole section: the last blocks dispatched are the
/// shortest tiles of `section` pairs, and the longest tiles of the last section start a section's
/// worth of tiles before the end (with the short section last, its few longest tiles start
/// within the last wave).
struct ShortFirstLine {
  TileLine line;

  KLAB_HOST_DEVICE constexpr int64_t tiles() const { return line.tiles(); }
  KLAB_HOST_DEVICE constexpr TileLine::Tile at(int64_t t) const {
    const int64_t lead = line.pairs() % line.section;  // the short section's pairs (0: none)
    if (t < lead * line.m_tiles) {
      const int64_t p = t % lead;
      return {line.m_tiles - 1 - t / lead, int(p % line.heads), int(p / line.heads)};
    }
    // Then whole sections, as TileLine's, over the pairs after the lead.
    const int64_t per_section = line.section * line.m_tiles, u = t - lead * line.m_tiles;
    const int64_t in = u % per_section,
                  p = lead + (u / per_section) * line.section + in % line.section;
    return {line.m_tiles - 1 - in / line.section, int(p % line.heads), int(p / line.heads)};
  }
};

/// Pairs a section: as many as have their K and V (nkv x d x 2 tensors of elem_bytes, shared by
/// the group query heads of a KV head) in l2_budget bytes, at least 1, at most all.
KLAB_HOST_DEVICE constexpr int64_t section_pairs(int64_t l2_budget, int64_t nkv, int64_t d,
                                                 int64_t elem_bytes, int64_t group, int64_t pairs) {
  const int64_t kv_head = nkv * d * 2 * elem_bytes;
  const int64_t fit = kv_head > 0 ? l2_budget * group / kv_head : pairs;
  return fit < 1 ? 1 : (fit > pairs ? pairs : fit);
}

}  // namespace klab::attention::fa3

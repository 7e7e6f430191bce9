// v06 fa3_persistent (sm_90a): v05's block (a TMA producer warpgroup, two consumer warpgroups of
// 64 query rows, FA3's two overlaps, K handed back after S and V after P V) as a persistent
// kernel: one block per SM walks a line of tiles instead of one tile per block.
// - The line (fa3_schedule.hpp's TileLine): sections of consecutive (batch, query head) pairs
//   whose K and V fit half the L2; inside a section the tiles by query tile, the last (the longest
//   key range: under the causal mask the heaviest) first, the section's pairs fastest. A block's
//   first tile is its index, each next one comes off an atomic counter in the workspace (fetched
//   by the producer one tile ahead, so its latency hides under the loads it issues); the last
//   block to draw an index past the end resets the counter for the next launch.
//   Why the counter and not a static stride: the line's weights fall within a section and jump
//   back up at the next one, so block b taking tiles b, b + grid, ... would be handed the
//   heaviest tile of each window over and over (an imbalance of up to a heavy tile a section),
//   and the tiles' times vary beyond their weights (the first blocks of a section miss in L2,
//   the SM clock moves under power); a block that draws its next tile when it finishes one is
//   longest-processing-time-first scheduling, off by at most about one tile at the end.
// - The prologue and epilogue of consecutive tiles overlap: the consumers hand Q back as soon
//   as a tile's last S is done (empty_q), and the producer, which runs ahead through the K/V
//   ring without draining it between tiles, loads the next tile's Q and first K blocks while
//   the consumers run the tile's last softmax, its last P V and its epilogue (O's stores); the
//   tile's coordinates travel with Q (written beside it before full_q's arrive).
// - The ping-pong runs across tiles (opened once a block, closed once when the consumers leave),
//   so one warpgroup starts the next tile's first S while the other finishes the last.
// Changes from v05: the grid (SM count instead of a block per tile), the producer's and the
// consumers' loops over tiles, Q's empty barrier; the round itself is v05's (fa3_overlap.cuh).
// Expected bottleneck: the tensor pipe with v05's per-round costs (barrier handoffs, the masked
// diagonal block, a tile's first S and last P V, which the other warpgroup's rounds now fill);
// the per-tile costs of v05 that this removes (block launch, barrier setup, Q's and the first K
// block's load latency, the epilogue with the tensor pipe idle) weighed most at short causal
// tiles (N = 4k: 16.5 key blocks a tile on average).
// Prediction (written before it ran): docs/worklogs/attention.md.
// Requirements: v05's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O); the line's
// tiles and the counter below 2^31; the workspace of two ints (Variant::workspace_bytes).
#include "kernels/attention/fa3_persistent.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V06Name {
  static constexpr const char* kName = "attention.v06";
};
}  // namespace

Variant gpu_v06_fa3_persistent() {
  return fa3::persistent_variant<V06Name, fa3::ExactSoftmax>(
      "attention.v06_fa3_persistent",
      "v05 as a persistent kernel: one block per SM takes tiles off an atomic counter, heaviest "
      "(longest key range) first within L2-sized sections of heads; the next tile's Q and K load "
      "under the current tile's last P V and epilogue; ping-pong across tiles");
}

}  // namespace klab::attention

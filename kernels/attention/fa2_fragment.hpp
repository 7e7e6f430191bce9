#pragma once
// The shared-memory layout and the register mappings of attention v03 (FlashAttention 2 on
// mma.sync m16n8k16), host-compilable so that the CPU tests model them lane by lane
// (tests/cpu/test_attention.cpp).
//
// Tiles of Q, K and V are row-major (rows, kD) in 16-bit elements, rows of kD / 8 16-byte chunks,
// chunk c of row r stored at chunk c ^ (r % 8): the 8 rows of one ldmatrix phase (same logical
// chunk) and the 8 chunks of one cp.async phase (same row) fall in 8 different 16-byte bank
// groups, with no padding.
//
// Every ldmatrix.x4 here addresses a 16 x 16 block the same way: lane l gives row l % 16, chunk
// l / 16, so matrix 0 is (rows 0-7, chunk 0), 1 (rows 8-15, chunk 0), 2 (rows 0-7, chunk 1),
// 3 (rows 8-15, chunk 1), and register i of lane l holds matrix i's row l / 4, elements
// 2 (l % 4) .. +1 (.trans: its column l / 4, rows 2 (l % 4) .. +1). With g = l / 4, t = l % 4:
// - Q (the A operand of S = Q K^T, 16 query rows x 16 of D): the registers are a0..a3 as they
//   come (a0 (g, 2t) a1 (g+8, 2t) a2 (g, 2t+8) a3 (g+8, 2t+8)).
// - K (the B operand of S = Q K^T: k = D, n = keys), stored (key, D), plain ldmatrix of 16 keys
//   x 16 of D addressed in B's order (k_ldmatrix_offset: lane l gives row l % 8 + 8 (l / 16),
//   chunk (l / 8) % 2, so matrix 1 is (rows 0-7, chunk 1) and 2 (rows 8-15, chunk 0)): key tile 0
//   (keys 0-7) takes {r0, r1}, key tile 1 (keys 8-15) {r2, r3} (b0 = (k 2t, n g), b1 = (k 2t+8,
//   n g)), each pair the two consecutive registers an MMA's B operand names. (In Q's order the
//   tiles would take {r0, r2} and {r1, r3}, and every pair would cost register moves after each
//   K load: docs/worklogs/attention.md measures what they cost.)
// - V (the B operand of O = P V: k = keys, n = D), stored (key, D), ldmatrix.trans of 16 keys x
//   16 of D: D tile 0 takes {r0, r1}, D tile 1 {r2, r3}.
// - P (the A operand of O = P V) is S's accumulators, rounded in registers: the key step ks
//   (keys 16 ks .. +15) of a warp's 16 rows takes S's key tiles 2 ks and 2 ks + 1:
//   a0 = (c0, c1) of tile 2 ks, a1 = (c2, c3) of 2 ks, a2 = (c0, c1) of 2 ks + 1, a3 = (c2, c3) of
//   2 ks + 1 (C fragment: c0, c1 (g, 2t..) c2, c3 (g+8, 2t..)).
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::attention::fa2 {

/// Element offset of chunk `chunk` (8 elements) of row `row` in a swizzled (rows, kD) tile.
template <int kD>
KLAB_HOST_DEVICE constexpr int tile_offset(int row, int chunk) {
  static_assert(kD % 64 == 0, "rows of 8k chunks");
  return row * kD + ((chunk ^ (row & 7)) << 3);
}

/// The element offset lane `lane` gives ldmatrix.x4 for the 16 x 16 block at rows row0 ..,
/// chunks chunk0, chunk0 + 1 (row0 % 8 == 0 keeps the swizzle a function of the lane).
template <int kD>
KLAB_HOST_DEVICE constexpr int ldmatrix_offset(int row0, int chunk0, int lane) {
  return tile_offset<kD>(row0 + (lane & 15), chunk0 + (lane >> 4));
}

/// ldmatrix_offset's per-lane part, computed once per thread: with row0 % 8 == 0 and chunk0
/// even, the swizzle of chunk chunk0 + lane / 16 in row row0 + lane % 16 changes only the low
/// three chunk bits, (chunk0 % 8 + lane / 16) ^ (lane % 8), one of four values per lane; the rest
/// of the offset is a compile-time constant in an unrolled loop (an immediate of the ldmatrix).
struct LaneOffsets {
  int base[4];  ///< by (chunk0 / 2) % 4
};

/// LaneOffsets of a lane that addresses row r, chunk c (c < 2) of each 16 x 16 block.
template <int kD>
KLAB_HOST_DEVICE constexpr LaneOffsets lane_offsets_at(int r, int c) {
  LaneOffsets lo{};
  for (int i = 0; i < 4; ++i) lo.base[i] = r * kD + ((((2 * i) | c) ^ (r & 7)) << 3);
  return lo;
}

template <int kD>
KLAB_HOST_DEVICE constexpr LaneOffsets lane_offsets(int lane) {
  return lane_offsets_at<kD>(lane & 15, lane >> 4);
}

/// K's ldmatrix.x4 addressing (B's register order): lane `lane` gives row row0 + lane % 8 +
/// 8 (lane / 16), chunk chunk0 + (lane / 8) % 2.
template <int kD>
KLAB_HOST_DEVICE constexpr int k_ldmatrix_offset(int row0, int chunk0, int lane) {
  return tile_offset<kD>(row0 + (lane & 7) + ((lane >> 4) << 3), chunk0 + ((lane >> 3) & 1));
}

/// k_ldmatrix_offset's per-lane part (for ldmatrix_offset(lo, row0, chunk0) below).
template <int kD>
KLAB_HOST_DEVICE constexpr LaneOffsets k_lane_offsets(int lane) {
  return lane_offsets_at<kD>((lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
}

/// ldmatrix_offset<kD>(row0, chunk0, lane) from the lane's LaneOffsets (row0 % 8 == 0, chunk0
/// even).
template <int kD>
KLAB_HOST_DEVICE constexpr int ldmatrix_offset(const LaneOffsets& lo, int row0, int chunk0) {
  return lo.base[(chunk0 >> 1) & 3] + row0 * kD + ((chunk0 & ~7) << 3);
}

/// K's ldmatrix.x4 registers (k_ldmatrix_offset's order) -> the B fragments of key tiles 0 and 1
/// of the block.
template <class U>
KLAB_HOST_DEVICE constexpr void k_fragments(const U (&r)[4], U (&b_lo)[2], U (&b_hi)[2]) {
  b_lo[0] = r[0];
  b_lo[1] = r[1];
  b_hi[0] = r[2];
  b_hi[1] = r[3];
}

/// V's ldmatrix.x4.trans registers -> the B fragments of D tiles 0 and 1 of the block.
template <class U>
KLAB_HOST_DEVICE constexpr void v_fragments(const U (&r)[4], U (&b_lo)[2], U (&b_hi)[2]) {
  b_lo[0] = r[0];
  b_lo[1] = r[1];
  b_hi[0] = r[2];
  b_hi[1] = r[3];
}

/// P's A fragment for one 16-key step from S's accumulators of key tiles 2 ks (lo) and 2 ks + 1
/// (hi); pack(x, y) rounds two floats into one register (x in the low half).
template <class U, class Pack>
KLAB_HOST_DEVICE constexpr void p_fragment(const float (&lo)[4], const float (&hi)[4], U (&a)[4],
                                           Pack&& pack) {
  a[0] = pack(lo[0], lo[1]);
  a[1] = pack(lo[2], lo[3]);
  a[2] = pack(hi[0], hi[1]);
  a[3] = pack(hi[2], hi[3]);
}

}  // namespace klab::attention::fa2

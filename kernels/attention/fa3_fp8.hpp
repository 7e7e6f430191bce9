#pragma once
// The FP8 (e4m3) forward's layouts (attention v12), host-compilable so that the CPU tests check
// them lane by lane (tests/cpu/test_attention.cpp).
//
// - Rows of D = 128 e4m3 values are 128 bytes: one 128-byte swizzle span, the byte geometry of a
//   bf16 tile at D = 64, so v12 takes fa3::Config<64, ...>'s tiles, descriptors and barriers
//   (fa3_tile.hpp) with k-steps of 32 bytes: 32 e4m3 values (wgmma m64nNk32) instead of 16.
// - FP8 wgmma reads both operands K-major (wgmma_fp8_sm90.cuh): Q and K hold D contiguously, but
//   P V's B must hold the keys contiguously, so a launch before the forward transposes V into
//   Vt, (B, Nb * 128, Hkv, 128) bytes with Nb = ceil(Nkv / 128): row jb * 128 + d of head h
//   holds the 128 keys of key block jb at head dimension d. Shaped as a (B, N, H, 128) token
//   array, it is read by the same 4-D tensor map and box coordinates as K (fa3_kernel.cuh's
//   load_kv: (0, h, jb * 128, b)), since a key block's D rows are its 128 "tokens".
// - P's registers pack in place: the A fragment of k32 holds, in register j, the keys
//   4 t + 16 (j / 2) .. + 3 (t = l % 4) of row g + 8 (j % 2) (g = l / 4), where S's accumulators
//   hold keys 2 t + 8 i + {0, 1}. The keys of P V are its k, so any permutation of them applied to
//   P's columns and to Vt's columns alike leaves O unchanged: Vt's column c of a 32-key group
//   holds key p8_key(c), the key whose score the thread packed into the fragment's place c.
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::attention::fa3 {

/// The FP8 rung's head dimension and key block (both 128: a key block's Vt tile is 128 rows of
/// 128 keys).
inline constexpr int kFp8D = 128, kFp8BlockN = 128;

/// The key (within its 32-key group) whose P value the A fragment holds at k = c (0..31): place
/// c = 16 h + 4 t + q holds accumulator key 16 h + 2 t + (q % 2) + 8 (q / 2).
KLAB_HOST_DEVICE constexpr int p8_key(int c) {
  const int h = c / 16, t = (c % 16) / 4, q = c % 4;
  return 16 * h + 2 * t + (q % 2) + 8 * (q / 2);
}
/// Its inverse: the place (Vt's column within the group) of key k (0..31).
KLAB_HOST_DEVICE constexpr int p8_place(int k) {
  const int h = k / 16, r = k % 16;  // r = 2 t + (q % 2) + 8 (q / 2)
  return 16 * h + 4 * ((r % 8) / 2) + (r % 2) + 2 * (r / 8);
}
/// Which of S's accumulators (kBlockN / 2 a thread, wgmma_fragment.hpp) goes to byte b of the A
/// register j of k-step ks: registers 16 ks .. + 15 hold the step's four n8 blocks.
KLAB_HOST_DEVICE constexpr int p8_source(int ks, int j, int b) {
  return 16 * ks + 8 * (j / 2) + 2 * (j % 2) + 4 * (b / 2) + (b % 2);
}

/// Vt's geometry: rows of 128 keys, Nb * 128 of them a (batch, head) pair.
struct VtLayout {
  int64_t blocks;  // Nb = ceil(Nkv / 128)
  KLAB_HOST_DEVICE constexpr int64_t rows() const { return blocks * kFp8D; }
  /// Bytes of the whole array for b batches and hkv heads.
  KLAB_HOST_DEVICE constexpr int64_t bytes(int64_t b, int64_t hkv) const {
    return b * rows() * hkv * kFp8BlockN;
  }
  /// Byte offset of key n (of Nkv, or past it: a zero) at head dimension d, head h, batch bi.
  KLAB_HOST_DEVICE constexpr int64_t offset(int64_t bi, int64_t n, int64_t h, int64_t d,
                                            int64_t hkv) const {
    const int64_t jb = n / kFp8BlockN, k = n % kFp8BlockN;
    const int64_t col = k / 32 * 32 + p8_place(int(k % 32));
    return ((bi * rows() + jb * kFp8D + d) * hkv + h) * kFp8BlockN + col;
  }
};
KLAB_HOST_DEVICE constexpr VtLayout vt_layout(int64_t nkv) {
  return {(nkv + kFp8BlockN - 1) / kFp8BlockN};
}

}  // namespace klab::attention::fa3

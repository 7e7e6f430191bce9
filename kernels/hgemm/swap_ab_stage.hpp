#pragma once
// The shared-memory stage of hgemm's swapped-operand weight-streaming rung (v19, M <= 128), the
// descriptors that read it, and how the rung divides the weight among CTAs. v19 computes
// C^T = B^T A^T: the weight B (K x N, N contiguous) is wgmma's A operand, 64 of its columns per
// m64 block, and the M <= 128 rows of A (the tokens) are wgmma's N, 8 to 128 wide. One stage holds
// one k-tile of 64: kBlocks panels of B, each the TMA's (64 n, 64 k-rows) box (or two of 32 k-rows,
// one from each CTA of a pair, where the tokens are halved) with
// CU_TENSOR_MAP_SWIZZLE_128B (128-byte rows of N: an MN-major operand, the "transposed A"), then
// A's (64 k, up to kTok rows) box, K-major (v19 loads M rounded up to 8 rows, zero-filled past M
// by the TMA, and zeroes the stage's rows past the box once). Host-and-device constexpr:
// the CPU tests decode these descriptors and check, element by element, that wgmma reads each
// operand where the TMA put it.
#include <cstdint>

#include "kernels/hgemm/wgmma_store_sm90.hpp"
#include "klab/device/swizzle.hpp"
#include "klab/device/wgmma_desc.hpp"

namespace klab::hgemm {

template <int kBlocks_, int kTok_>
struct SwapAbStage {
  static constexpr int kBlocks = kBlocks_, kTok = kTok_;  // m64 blocks of B's columns; tokens
  static constexpr int kBlockN = 64 * kBlocks, kBlockK = 64;
  static constexpr uint32_t kRowBytes = 128, kAtomBytes = 8 * kRowBytes;
  static constexpr uint32_t kPanelBytes = kBlockK * kRowBytes;  // one (64 k, 64 n) box of B
  static constexpr uint32_t kBytesB = kBlocks * kPanelBytes, kBytesA = kTok * kRowBytes;
  static constexpr uint32_t kBytes = kBytesB + kBytesA;
  static constexpr auto kSwizzle = device::WgmmaSwizzle::b128;
  static_assert(kTok == 8 || kTok == 16 || kTok == 32 || kTok == 64 || kTok == 128,
                "wgmma N: 8 to 128 tokens");
  static_assert(kBytes % 1024 == 0, "stages on 1024-byte boundaries (the 128-byte swizzle atom)");

  /// A weight box's k-rows 32 h .. 32 h + 31 (h = 0, 1) start kHalfPanelBytes h into its panel:
  /// whole 1024-byte swizzle atoms, so the TMA's (64 n, 32 k-rows) box written there lands where
  /// offset_b puts those rows (the token-split entries: each CTA of a pair multicasts one half).
  static constexpr uint32_t kHalfPanelBytes = kPanelBytes / 2;
  static_assert(kHalfPanelBytes % 1024 == 0);

  /// Where the TMA puts B(k, n) and A(tok, k) (bytes from the stage's start).
  static constexpr uint32_t offset_b(int k, int n) {
    return uint32_t(n / 64) * kPanelBytes +
           device::swizzle_128b(uint32_t(k) * kRowBytes + uint32_t(n % 64) * 2);
  }
  static constexpr uint32_t offset_a(int tok, int k) {
    return kBytesB + device::swizzle_128b(uint32_t(tok) * kRowBytes + uint32_t(k) * 2);
  }

  /// wgmma's A: B's columns 64 j .. 64 j + 63 (its M) x k-rows 16 kk .. 16 kk + 15, MN-major:
  /// one panel, the next 8 k-rows an atom further (SBO); LBO (the next 64 of M) is never used.
  static constexpr uint64_t desc_b(uint32_t stage_addr, int j, int kk) {
    return device::wgmma_desc_mn_major(
        stage_addr + uint32_t(j) * kPanelBytes + uint32_t(kk) * 16 * kRowBytes, kSwizzle,
        kPanelBytes, kAtomBytes);
  }
  /// wgmma's B: the kTok tokens (its N) x k 16 kk .. 16 kk + 15, K-major: 8-row atoms packed,
  /// the k16 slice 32 bytes into each 128-byte row.
  static constexpr uint64_t desc_a(uint32_t stage_addr, int kk) {
    return device::wgmma_desc_k_major(stage_addr + kBytesB + uint32_t(kk) * 32, kSwizzle,
                                      kAtomBytes);
  }
};

/// v19's C box for the TMA store: one m64 block's 64 columns of C (the accumulators' rows) by the
/// CTA's kTok tokens (their columns), transposed into C's layout by stmatrix.trans: kTok rows of
/// 128 bytes (1024-byte aligned). The swizzle keeps stmatrix free of bank conflicts: a matrix's 8
/// token rows fall in 8 different chunks.
template <int kTok>
using SwapAbStoreBox = StmatrixStoreBox<kTok, /*transposed*/ true>;

/// v19's ring: as many stages of `stage_bytes` as fit in 225 KiB (less the base's alignment and
/// the barriers), at most kV19MaxStages. Deeper rings for the small stages (64 columns of B: 22
/// stages of 10 KiB instead of 12) were measured in 2026-12-02_789bfd3's run and gained nothing:
/// a CTA streamed the same ~34 GB/s with twice the bytes in flight (N = 6144, M = 16: 16.86 us
/// under Nsight Compute against 16.83), so the ring is not what limits one CTA.
inline constexpr int kV19MaxStages = 12;
constexpr int v19_stages(int stage_bytes) {
  const int fit = (225 * 1024 - 1024 - 2 * kV19MaxStages * 8) / stage_bytes;
  return fit < kV19MaxStages ? fit : kV19MaxStages;
}
/// The dynamic shared memory of a ring of v19_stages(stage_bytes): aligned ring, then barriers.
constexpr int v19_smem_bytes(int stage_bytes) {
  return 1024 + v19_stages(stage_bytes) * stage_bytes + 2 * v19_stages(stage_bytes) * 8;
}
/// The most any entry of v19 takes, at any of its token widths (halved or not).
constexpr int v19_max_smem_bytes() {
  int most = 0;
  for (int blocks : {1, 2, 3})
    for (int tok : {8, 16, 32, 64, 128}) {
      const int b = v19_smem_bytes(blocks * 8192 + tok * 128);
      most = b > most ? b : most;
    }
  return most;
}

/// v19's entries: kBlocks m64 blocks of B's columns per CTA (a slab of 64 kBlocks), K split
/// `splits` ways over a cluster of that many CTAs, which sum their partials in rank order
/// through distributed shared memory (deterministic); or the tokens split in `halves` over a
/// cluster of two CTAs, each streaming half of every weight box multicast to both (one copy of
/// the slab from L2 for the pair), each with its own half of the tokens: no partials. Index =
/// position (append only).
struct SwapAbEntry {
  int blocks, splits, halves = 1;
};
inline constexpr SwapAbEntry kV19Entries[] = {
    {3, 1},     // 0: 192-column slabs, whole K: N = 24576 is 128 CTAs
    {1, 2},     // 1: 64-column slabs, K halved: N = 4096 is 128 CTAs
    {3, 4},     // 2: 192-column slabs, K in quarters: N = 6144 is 128 CTAs, if 32 clusters of 4 fit
    {1, 1},     // 3: 64-column slabs, whole K: N = 6144 is 96 CTAs, each streaming faster
    {2, 4},     // 4: 128-column slabs, K in quarters: N = 4096 is 128 CTAs, each stage's tokens
                //    shared by twice the weight (entry 1's), the partials summed four ways
    {1, 1, 2},  // 5: 64-column slabs, whole K, the tokens in two halves over a 2-CTA cluster
                //    that multicasts the weight: N = 4096 is 128 CTAs, no partials
};
inline constexpr int kV19SpaceSize = int(sizeof(kV19Entries) / sizeof(kV19Entries[0]));

/// The most rows (tokens) v19 takes: one wgmma's N.
inline constexpr int kV19MaxTokens = 128;
/// The tokens' width v19 runs m <= kV19MaxTokens rows at: 16 up to 16 rows, 64 up to 64, else
/// 128.
constexpr int v19_tokens(int64_t m) { return m <= 16 ? 16 : m <= 64 ? 64 : 128; }

/// The modelled time (seconds) of entry e at (n, k) when at most `resident` of its CTAs run at
/// once (whole clusters; the device's answer, cudaOccupancyMaxActiveClusters x the cluster's
/// CTAs): the waves of its CTAs, each a CTA's bytes of B at its share of DRAM's ~4.3 TB/s (a pair
/// that halves the tokens reads its slab from DRAM once), capped at ~50 GB/s an SM (a ring of ~100
/// KiB over a ~2 us loaded latency), plus ~1.5 us a wave (the ring's first fill, the epilogue).
constexpr double v19_model_seconds(const SwapAbEntry& e, int64_t n, int64_t k, int64_t resident) {
  constexpr double kDram = 4.3e12, kPerSm = 50e9, kWaveCost = 1.5e-6;
  if (resident <= 0) return 1e30;
  const int64_t slabs = (n + 64 * e.blocks - 1) / (64 * e.blocks);
  const int64_t ctas = slabs * e.splits * e.halves;
  const int64_t waves = (ctas + resident - 1) / resident;
  const int64_t active = ctas < resident ? ctas : resident;
  const double share = kDram * double(e.halves) / double(active);  // DRAM a CTA draws on
  const double rate = share < kPerSm ? share : kPerSm;
  const int64_t k_tiles = (k + 63) / 64, per_split = (k_tiles + e.splits - 1) / e.splits;
  return double(waves) * (double(per_split) * 64.0 * 64.0 * e.blocks * 2.0 / rate + kWaveCost);
}

/// v19's built-in entry for (n, k), where no tune table has one for the shape class: the least
/// modelled time (ties to the earlier entry); resident(i): how many of entry i's CTAs fit on the
/// device at once. The model counts the weight's bytes alone, not the tokens', so it cannot see
/// what halving the tokens saves: the token-split entries are the tune's alone.
template <class Resident>
constexpr int v19_entry(int64_t n, int64_t k, Resident&& resident) {
  int best = 0;
  double best_s = v19_model_seconds(kV19Entries[0], n, k, resident(0));
  for (int i = 1; i < kV19SpaceSize; ++i) {
    if (kV19Entries[i].halves > 1) continue;
    const double s = v19_model_seconds(kV19Entries[i], n, k, resident(i));
    if (s < best_s) best = i, best_s = s;
  }
  return best;
}

}  // namespace klab::hgemm

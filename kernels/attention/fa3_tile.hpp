#pragma once
// The shared-memory tiles, wgmma descriptors, key-block counts and tensor-map parameters of
// attention v04 and v05 (FlashAttention 3's forward on wgmma and TMA), host-compilable so that the CPU
// tests check them element by element (tests/cpu/test_attention.cpp).
//
// Tiles: Q (kBlockM, kD) and each stage's K and V (kBlockN, kD), row-major 16-bit elements as
// kD / 64 panels of (rows, 64), one after another: a panel is one TMA box of 128-byte rows laid
// out with CU_TENSOR_MAP_SWIZZLE_128B (16-byte chunk c of row r at chunk c ^ (r % 8),
// swizzle.hpp), every panel on a 1024-byte boundary.
// - S = Q K^T (m = query rows, n = keys, k = D): A = Q, B = K^T. Q's rows and K's rows (keys)
//   both hold D contiguously: both operands are K-major (transpose bits 0), 8-row atoms 1024
//   bytes apart (SBO); the k16 slice kk of D is 32 (kk % 4) bytes into the rows of panel kk / 4.
// - O = P V (m = query rows, n = D, k = keys): A = P from registers, B = V. V's rows are keys (k)
//   with D (n) contiguous: each k-row holds 128 bytes of n, an MN-major operand (transpose bit 1,
//   as hgemm's row-major B): the next 64 of D a panel further (LBO = panel bytes), the next 8 keys
//   an atom further (SBO = 1024); the k16 slice ks of keys starts 16 ks rows (2048 ks bytes) in.
#include <cstdint>

#include "klab/device/host_device.hpp"
#include "klab/device/swizzle.hpp"
#include "klab/device/wgmma_desc.hpp"
#include "klab/device/wgmma_fragment.hpp"

namespace klab::attention::fa3 {

inline constexpr uint32_t kRowBytes = 128, kAtomBytes = 8 * kRowBytes;
inline constexpr int kPanelCols = 64;  // 16-bit elements of one 128-byte swizzle span
inline constexpr auto kSwizzle = device::WgmmaSwizzle::b128;

/// A (kRows, kD) tile of 16-bit elements as kD / 64 TMA panels of (kRows, 64).
template <int kRows, int kD>
struct PanelTile {
  static constexpr int kPanels = kD / kPanelCols;
  static constexpr uint32_t kPanelBytes = uint32_t(kRows) * kRowBytes;  // one TMA box
  static constexpr uint32_t kBytes = kPanels * kPanelBytes;
  static_assert(kD % kPanelCols == 0 && kRows % 8 == 0);

  /// Where the TMA puts element (row, col) (bytes from the tile's start).
  KLAB_HOST_DEVICE static constexpr uint32_t offset(int row, int col) {
    return uint32_t(col / kPanelCols) * kPanelBytes +
           device::swizzle_128b(uint32_t(row) * kRowBytes + uint32_t(col % kPanelCols) * 2);
  }
  /// K-major operand (A = Q, B = K^T): rows row0 (a multiple of 8) on, columns (k) 16 kk .. +15.
  /// Both encode the tile's start once and advance it (wgmma_desc_advance): the k-steps of an
  /// unrolled loop share one encoding and differ by an add.
  KLAB_HOST_DEVICE static constexpr uint64_t desc_k_major(uint32_t addr, int row0, int kk) {
    return device::wgmma_desc_advance(
        device::wgmma_desc_k_major(addr, kSwizzle, kAtomBytes),
        uint32_t(kk / 4) * kPanelBytes + uint32_t(row0) * kRowBytes + uint32_t(kk % 4) * 32);
  }
  /// MN-major B operand (V of O = P V): rows (k) 16 ks .. +15, every column (n) of the tile.
  KLAB_HOST_DEVICE static constexpr uint64_t desc_mn_major(uint32_t addr, int ks) {
    return device::wgmma_desc_advance(
        device::wgmma_desc_mn_major(addr, kSwizzle, kPanelBytes, kAtomBytes),
        uint32_t(ks) * 16 * kRowBytes);
  }
};

/// v16's epilogue: where warpgroup thread t (0..127) of consumer warpgroup wg stores its O
/// accumulators 2p and 2p + 1 (one 4-byte pair, wgmma_acc_coord's neighbours) in the block's Q
/// tile, whose rows 64 wg .. + 63 the warpgroup's own S products alone read: O's 64 rows then
/// leave as Q arrived, one TMA box a panel. Conflict-free and covering each element once (CPU
/// test).
template <int kBlockM, int kD>
KLAB_HOST_DEVICE constexpr uint32_t o_stage_offset(int wg, int t, int i) {
  const device::WgmmaAccCoord c = device::wgmma_acc_coord(t, i);
  return PanelTile<kBlockM, kD>::offset(64 * wg + c.row, c.col);
}

/// The key block of the FA3 rungs at head dimension kD, unless a rung picks its own: kD = 256
/// takes 64 keys (two 128-key stages would need 256 KiB beside Q's 64), the others 128.
template <int kD>
inline constexpr int kDefaultBlockN = kD == 256 ? 64 : 128;

/// v11's key block and stages at non-causal D = 64 (fa3_overlap.cuh's WideKeyConfig). 192 keys
/// (FlashAttention 3's non-causal tile there) leave two stages beside Q's 24 KiB and three P
/// tiles of 24 KiB, and ptxas spills ~14 registers a consumer thread (d645a54's run); 160 keys
/// leave three stages and no spill.
inline constexpr int kWideKeys = 160, kWideStages = 3;

/// v22's key block and stages at non-causal D = 64 (fa3_overlap.cuh's SerialWideKeyConfig):
/// FlashAttention 3's 192 x 176 tile there (its tile_size_fwd_sm90, P in registers, no
/// intra-warpgroup overlap); stages of 44 KiB, four beside Q's 24 KiB.
inline constexpr int kSerialKeys = 176, kSerialStages = 4, kSerialConsumers = 3;

/// v23's key block and stages at non-causal D = 64 (fa3_overlap.cuh's TwoConsumerWideKeyConfig):
/// cuDNN's block there (two consumers on 256 keys: its kernel's name and launch, 2026-12-04_
/// aafb937_attention_v22's profile), P through shared memory (v11's path): Q's 16 KiB, two P
/// tiles of 32 KiB and two stages of 64 KiB, 208 KiB.
inline constexpr int kTwoConsumerKeys = 256, kTwoConsumerStages = 2;

/// The FA3 rungs' tiles for head dimension kD: kBlockM query rows (64 a consumer warpgroup: two
/// of them, three in v09 at D = 64), key blocks of kBlockN, kStages_ (K, V) stages (v04: 2; v05:
/// 3 where they fit). Shared memory: Q, then the stages (K, V each), then, with kPInSmem_ (v11),
/// one P tile per consumer warpgroup: its (64, kBlockN) probabilities as the K-major A operand
/// of an SS P V (P's keys are its k), laid out as Q's panels are (whole panels of 64 keys: the
/// swizzle may put a row's first chunks anywhere in its panel).
template <int kD, int kStages_ = 2, int kBlockM_ = 128, int kBlockN_ = kDefaultBlockN<kD>,
          bool kPInSmem_ = false>
struct Tiles {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kStages = kStages_;
  static constexpr bool kPInSmem = kPInSmem_;
  using Q = PanelTile<kBlockM, kD>;
  using KV = PanelTile<kBlockN, kD>;
  using P = PanelTile<64, (kBlockN + kPanelCols - 1) / kPanelCols * kPanelCols>;  // whole panels
  static constexpr int kPTiles = kPInSmem ? kBlockM / 64 : 0;
  static constexpr uint32_t kStageBytes = 2 * KV::kBytes;
  static constexpr uint32_t kBytes = Q::kBytes + kStages * kStageBytes + kPTiles * P::kBytes;
  KLAB_HOST_DEVICE static constexpr uint32_t k_tile(int stage) {
    return Q::kBytes + uint32_t(stage) * kStageBytes;
  }
  KLAB_HOST_DEVICE static constexpr uint32_t v_tile(int stage) {
    return k_tile(stage) + KV::kBytes;
  }
  /// Consumer warpgroup wg's P tile (kPInSmem).
  KLAB_HOST_DEVICE static constexpr uint32_t p_tile(int wg) {
    return Q::kBytes + kStages * kStageBytes + uint32_t(wg) * P::kBytes;
  }
};

/// Where a consumer thread stores its P pairs into its warpgroup's P tile (v11): the pair of S's
/// n8 block nb in row half h is wgmma_acc_coord's registers 4 nb + 2 h and + 1, row 16 w + l / 4
/// + 8 h and keys 8 nb + 2 (l % 4) + {0, 1} of warp w, lane l; the 128-byte swizzle moves the
/// block's 16-byte chunk nb % 8 to chunk (nb % 8) ^ (l / 4) (the row's r % 8). p_store_of
/// computes a thread's part once, p_pair_offset the rest from constants (nb, h), so that a
/// kernel's 48 stores a block do not each keep an address live.
struct PStore {
  uint32_t base;   // row 16 w + l / 4, column pair 2 (l % 4): (16 w + l / 4) 128 + 4 (l % 4)
  uint32_t xor16;  // 16 (l / 4): the swizzle's chunk XOR, in bytes
};
KLAB_HOST_DEVICE constexpr PStore p_store_of(int tid) {
  const int w = tid / 32, l = tid % 32;
  return {uint32_t(16 * w + l / 4) * kRowBytes + 4u * uint32_t(l % 4), 16u * uint32_t(l / 4)};
}
KLAB_HOST_DEVICE constexpr uint32_t p_pair_offset(PStore t, int nb, int h) {
  return t.base + uint32_t(h) * kAtomBytes + uint32_t(nb / 8) * (64 * kRowBytes) +
         ((uint32_t(nb % 8) * 16u) ^ t.xor16);
}

/// The mbarriers after the tiles: Q's full and empty, then per stage K's full, V's full, K's
/// empty and V's empty (a stage's K and V go back separately: v05 hands K back once S has read
/// it, V once P V has).
template <class TilesT>
inline constexpr int kBarrierCount = 2 + 4 * TilesT::kStages;
/// Words after the mbarriers: the persistent rung's tile (query tile, head, batch and a spare
/// word), one word per consumer warp that pins its softmax ahead of a wgmma wait, then v18's
/// Q halves: a full and an empty mbarrier each, and each half's tile (fa3_kernel.cuh's Barriers).
inline constexpr int kScratchBytes = 4 * 4 + 16 * 4 + 4 * 8 + 2 * 4 * 4;
/// The dynamic shared memory of an FA3 block with these tiles: up to 1023 bytes lost aligning
/// the base to 1024, the tiles, the mbarriers and the scratch words.
template <class TilesT>
inline constexpr int kSmemBytes = 1024 +
                                  int(TilesT::kBytes) + kBarrierCount<TilesT> * 8 + kScratchBytes;
/// What one block may take on sm_90 (227 KiB).
inline constexpr int kMaxSmemBytes = 227 * 1024;

/// The key blocks (of block_n keys) that the query tile of rows n0 .. n0 + block_m - 1 visits:
/// blocks 0 .. count - 1 (the ones past the last valid row's last visible key are skipped), of
/// which blocks unmasked .. count - 1 cross the causal diagonal or the end of the keys and take
/// the element-wise mask; blocks below unmasked are visible to every row of the tile.
struct KeyBlocks {
  int64_t count, unmasked;
};

KLAB_HOST_DEVICE constexpr KeyBlocks key_blocks(int64_t nq, int64_t nkv, bool causal, int64_t n0,
                                                int block_m, int block_n) {
  auto clamp_keys = [nkv](int64_t k) { return k < 0 ? 0 : (k > nkv ? nkv : k); };
  int64_t keys = nkv, first_keys = nkv;  // keys of the last valid row; of the tile's first row
  if (causal) {                          // row n sees keys j <= n + nkv - nq (bottom right)
    const int64_t last_row = (n0 + block_m < nq ? n0 + block_m : nq) - 1;
    keys = clamp_keys(last_row + nkv - nq + 1);
    first_keys = clamp_keys(n0 + nkv - nq + 1);
  }
  return {(keys + block_n - 1) / block_n, first_keys / block_n};
}

/// Whether the query rows first_row .. first_row + rows - 1 see no key in the second half of key
/// block jb (of block_n keys): the last key any of them sees (the causal diagonal, bottom right,
/// or the end of the keys) comes before key jb block_n + block_n / 2. v19 then computes that
/// block's S for those rows over its first half only: the second half's weights are exactly 0,
/// so the result is the same. At Nq = Nkv with 128-row tiles and 128-key blocks, it holds for
/// the first consumer warpgroup's 64 rows at every tile's diagonal block.
KLAB_HOST_DEVICE constexpr bool first_half_only(int64_t nq, int64_t nkv, bool causal,
                                                int64_t first_row, int rows, int64_t jb,
                                                int block_n) {
  const int64_t diagonal = first_row + rows - 1 + nkv - nq;  // the last row's last causal key
  const int64_t last_key = causal && diagonal < nkv - 1 ? diagonal : nkv - 1;
  return last_key < jb * block_n + block_n / 2;
}

/// A (B, N, H, D) tensor as v04's 4-D tensor map reads it: dims innermost first (D, H, N, B),
/// strides in bytes between heads, tokens and batches, boxes of (128 bytes, 1, rows, 1): one
/// panel of `rows` tokens of one head (64 elements of 2 bytes; 128 e4m3 values, v12). Tokens
/// past N arrive as zeros (the box stops at its batch's end).
struct TokenMap {
  uint64_t dims[4], strides[3];
  uint32_t box[4];
};

KLAB_HOST_DEVICE constexpr TokenMap token_map(int64_t b, int64_t n, int64_t h, int64_t d, int rows,
                                              int elem_bytes = 2) {
  const uint64_t head = uint64_t(d) * uint64_t(elem_bytes), token = head * uint64_t(h);
  return {{uint64_t(d), uint64_t(h), uint64_t(n), uint64_t(b)},
          {head, token, token * uint64_t(n)},
          {kRowBytes / uint32_t(elem_bytes), 1, uint32_t(rows), 1}};
}

/// P's A registers for the 16-key step ks of O = P V, from S's wgmma accumulators s (kN / 2 a
/// thread, wgmma_fragment.hpp's layout): S's n8 blocks 2 ks and 2 ks + 1 hold exactly the
/// elements of the register-A fragment (wgmma_rs in wgmma_sm90.cuh); pack(x, y) rounds two floats
/// into one register, x in the low half.
template <int kN, class U, class Pack>
KLAB_HOST_DEVICE constexpr void p_operand(const float (&s)[kN / 2], int ks, U (&a)[4],
                                          Pack&& pack) {
  const int i = 8 * ks;
  a[0] = pack(s[i], s[i + 1]);
  a[1] = pack(s[i + 2], s[i + 3]);
  a[2] = pack(s[i + 4], s[i + 5]);
  a[3] = pack(s[i + 6], s[i + 7]);
}

}  // namespace klab::attention::fa3

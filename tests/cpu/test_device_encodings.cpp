// The layout arithmetic of klab/device that the host compiler can check: the TMA/wgmma swizzles,
// the grouped tile order, the wgmma shared-memory descriptor.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "klab/device/ring_slot.hpp"
#include "klab/device/stmatrix_fragment.hpp"
#include "klab/device/swizzle.hpp"
#include "klab/device/tile_order.hpp"
#include "klab/device/wgmma_desc.hpp"
#include "klab/device/wgmma_fragment.hpp"
#include "kernels/hgemm/split_k_plan.hpp"
#include "kernels/hgemm/stream_k_plan.hpp"
#include "kernels/hgemm/swap_ab_stage.hpp"
#include "kernels/hgemm/wgmma_stage_sm90.hpp"
#include "kernels/hgemm/wgmma_store_sm90.hpp"

namespace klab::device {
namespace {

// ---- swizzles ----

/// The documented pattern, computed the long way: for a kSpan-byte swizzle, the 16-byte chunk
/// within the kSpan-byte span (kSpan / 16 values) is XORed with the offset's 128-byte row,
/// modulo kSpan / 16 (the row within the atom of 8 x kSpan bytes).
template <uint32_t kSpan>
uint32_t reference_swizzle(uint32_t offset) {
  const uint32_t chunks = kSpan / 16;
  const uint32_t in_chunk = offset % 16;
  const uint32_t chunk = (offset / 16) % chunks;
  const uint32_t span_base = offset - offset % kSpan;
  const uint32_t row128 = (offset / 128) % 8;
  return span_base + ((chunk ^ (row128 % chunks)) * 16) + in_chunk;
}

template <uint32_t kSpan>
void check_swizzle(uint32_t (*fn)(uint32_t)) {
  constexpr uint32_t kAtom = kSwizzleAtomBytes<kSpan>;
  for (uint32_t atom = 0; atom < 4; ++atom) {
    std::set<uint32_t> seen;
    for (uint32_t i = 0; i < kAtom; ++i) {
      const uint32_t o = atom * kAtom + i;
      const uint32_t s = fn(o);
      ASSERT_EQ(s, reference_swizzle<kSpan>(o)) << "span " << kSpan << " offset " << o;
      ASSERT_EQ(s / kAtom, atom) << "stays in its atom";
      ASSERT_EQ(s % 16, o % 16) << "bytes inside a chunk do not move";
      ASSERT_EQ(fn(s), o) << "an involution";
      seen.insert(s);
    }
    EXPECT_EQ(seen.size(), kAtom) << "a bijection on the atom";
  }
}

TEST(Swizzle, AtomSizes) {
  EXPECT_EQ(kSwizzleAtomBytes<128>, 1024u);
  EXPECT_EQ(kSwizzleAtomBytes<64>, 512u);
  EXPECT_EQ(kSwizzleAtomBytes<32>, 256u);
}

TEST(Swizzle, BijectionOnEachAtomAndDocumentedPattern) {
  check_swizzle<128>(swizzle_128b);
  check_swizzle<64>(swizzle_64b);
  check_swizzle<32>(swizzle_32b);
}

TEST(Swizzle, KnownValues) {
  // 128B: row r of 128 bytes, chunk j -> chunk j ^ (r % 8).
  static_assert(swizzle_128b(0) == 0);
  static_assert(swizzle_128b(1 * 128 + 0 * 16) == 1 * 128 + 1 * 16);
  static_assert(swizzle_128b(3 * 128 + 5 * 16 + 7) == 3 * 128 + (5 ^ 3) * 16 + 7);
  static_assert(swizzle_128b(9 * 128 + 2 * 16) == 9 * 128 + (2 ^ 1) * 16);  // row 9: next atom
  // 64B: rows of 64 bytes, chunk j (0..3) -> j ^ ((r / 2) % 4).
  static_assert(swizzle_64b(2 * 64 + 0 * 16) == 2 * 64 + 1 * 16);
  static_assert(swizzle_64b(7 * 64 + 1 * 16) == 7 * 64 + (1 ^ 3) * 16);
  // 32B: rows of 32 bytes, chunk j (0..1) -> j ^ ((r / 4) % 2).
  static_assert(swizzle_32b(4 * 32) == 4 * 32 + 16);
  static_assert(swizzle_32b(3 * 32 + 16) == 3 * 32 + 16);
  SUCCEED();
}

TEST(Swizzle, ChunkFormIsThe128ByteSwizzle) {
  for (int row = 0; row < 64; ++row)
    for (int chunk = 0; chunk < 8; ++chunk)
      ASSERT_EQ(swizzle_128b_chunk(row, chunk), swizzle_128b(uint32_t(row) * 128 + chunk * 16))
          << row << "," << chunk;
}

// ---- grouped tile order ----

template <class I>
void check_grouped_order(I tiles_m, I tiles_n, I group) {
  std::vector<int> count(size_t(tiles_m * tiles_n), 0);
  for (I t = 0; t < tiles_m * tiles_n; ++t) {
    const TileCoord<I> c = grouped_tile_order<I>(t, group, tiles_m, tiles_n);
    ASSERT_GE(c.m, 0);
    ASSERT_LT(c.m, tiles_m);
    ASSERT_GE(c.n, 0);
    ASSERT_LT(c.n, tiles_n);
    ++count[size_t(c.m * tiles_n + c.n)];
    // Within a group, consecutive tiles go down a column first.
    if (t > 0) {
      const TileCoord<I> p = grouped_tile_order<I>(t - 1, group, tiles_m, tiles_n);
      if (p.m / group == c.m / group && p.n == c.n) {
        EXPECT_EQ(c.m, p.m + 1);
      }
    }
  }
  for (size_t i = 0; i < count.size(); ++i)
    ASSERT_EQ(count[i], 1) << "tile " << i << " of " << tiles_m << "x" << tiles_n << " group "
                           << group;
}

template <int kStages>
void check_ring_advance() {
  using Slot = klab::device::RingSlot<kStages>;
  for (int start = 0; start < 2 * kStages; ++start) {
    Slot from;
    for (int i = 0; i < start; ++i) from = from.next();
    Slot stepped = from;
    for (int n = 0; n <= 3 * kStages + 1; ++n) {
      const Slot jumped = from.advance(n);
      ASSERT_EQ(jumped.index, stepped.index) << "start " << start << " n " << n;
      ASSERT_EQ(jumped.phase, stepped.phase) << "start " << start << " n " << n;
      stepped = stepped.next();
    }
  }
}

TEST(RingSlot, AdvanceLandsWhereSingleStepsDo) {
  check_ring_advance<1>();
  check_ring_advance<4>();
  check_ring_advance<5>();
  check_ring_advance<6>();
}

TEST(TileOrder, GroupedOrderVisitsEveryTileOnce) {
  for (int m : {1, 2, 7, 8, 9, 16, 33})
    for (int n : {1, 3, 8, 13})
      for (int g : {1, 2, 4, 8, 16}) check_grouped_order<int>(m, n, g);
  check_grouped_order<int64_t>(130, 70, 8);
}

TEST(TileOrder, KnownValues) {
  // 4 x 3 tiles, groups of 2 tile rows: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) (2,0) (3,0) ...
  constexpr auto c3 = grouped_tile_order<int>(3, 2, 4, 3);
  static_assert(c3.m == 1 && c3.n == 1);
  constexpr auto c6 = grouped_tile_order<int>(6, 2, 4, 3);
  static_assert(c6.m == 2 && c6.n == 0);
  // A short last group (5 rows, groups of 2): row 4 alone, along its columns.
  constexpr auto c11 = grouped_tile_order<int>(11, 2, 5, 3);
  static_assert(c11.m == 3 && c11.n == 2);
  constexpr auto c13 = grouped_tile_order<int>(13, 2, 5, 3);
  static_assert(c13.m == 4 && c13.n == 1);
  SUCCEED();
}

// ---- wgmma descriptor ----

TEST(WgmmaDescriptor, FieldsLandInTheDocumentedBits) {
  // Address 0x400 (>> 4 = 0x40), LBO 16 (1), SBO 1024 (0x40), 128-byte swizzle (1 << 62).
  static_assert(wgmma_desc_encode(0x400, 16, 1024, WgmmaSwizzle::b128) == 0x4000'0040'0001'0040ull);
  // No swizzle, LBO 128 (8), SBO 256 (0x10), base offset 3 (bits 49-51).
  static_assert(wgmma_desc_encode(0x1230, 128, 256, WgmmaSwizzle::none, 3) ==
                0x0006'0010'0008'0123ull);
  // 64B (2) and 32B (3) swizzles in bits 62-63.
  static_assert(wgmma_desc_encode(0, 0, 0, WgmmaSwizzle::b64) == 0x8000'0000'0000'0000ull);
  static_assert(wgmma_desc_encode(0, 0, 0, WgmmaSwizzle::b32) == 0xC000'0000'0000'0000ull);
  SUCCEED();
}

TEST(WgmmaDescriptor, EachFieldIsFourteenBitsOfSixteenByteUnits) {
  // The largest shared-memory address (256 KiB - 16) fills bits 0-13 and nothing else.
  EXPECT_EQ(wgmma_desc_encode(0x3FFF0, 0, 0, WgmmaSwizzle::none), 0x3FFFull);
  // Low 4 bits are dropped; bits above 17 of an address are not encoded.
  EXPECT_EQ(wgmma_desc_encode(0x4000F, 0, 0, WgmmaSwizzle::none), 0ull);
  EXPECT_EQ(wgmma_desc_encode(0, 0x3FFF0, 0, WgmmaSwizzle::none), 0x3FFFull << 16);
  EXPECT_EQ(wgmma_desc_encode(0, 0, 0x3FFF0, WgmmaSwizzle::none), 0x3FFFull << 32);
  EXPECT_EQ(wgmma_desc_encode(0, 0, 0, WgmmaSwizzle::none, 7), 7ull << 49);
  // All fields at once: no field overlaps another.
  const uint64_t all = wgmma_desc_encode(0x3FFF0, 0x3FFF0, 0x3FFF0, WgmmaSwizzle::b32, 7);
  EXPECT_EQ(all, 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 7ull << 49 | 3ull << 62);
}

TEST(WgmmaDescriptor, DecodeInvertsEncode) {
  constexpr WgmmaDescFields f =
      wgmma_desc_decode(wgmma_desc_encode(0x1230, 8192, 1024, WgmmaSwizzle::b64, 5));
  static_assert(f.start == 0x1230 && f.lbo == 8192 && f.sbo == 1024 && f.base_offset == 5 &&
                f.swizzle == WgmmaSwizzle::b64);
  SUCCEED();
}

TEST(WgmmaDescriptor, AdvanceEqualsEncodingTheAddressFurtherOn) {
  // Every 16-byte address and offset whose sum stays under 256 KiB, strided so the test stays
  // quick, with both layouts' strides and every swizzle: advancing the encoded descriptor is
  // encoding the address the offset further on, bit for bit.
  int checked = 0;
  for (WgmmaSwizzle s :
       {WgmmaSwizzle::b128, WgmmaSwizzle::b64, WgmmaSwizzle::b32, WgmmaSwizzle::none})
    for (uint32_t addr = 0; addr < 0x40000; addr += 0x1230)
      for (uint32_t off = 0; addr + off < 0x40000; off += 0x0FF0) {
        ASSERT_EQ(wgmma_desc_advance(wgmma_desc_mn_major(addr, s, 8192, 1024), off),
                  wgmma_desc_mn_major(addr + off, s, 8192, 1024))
            << addr << " + " << off;
        ASSERT_EQ(wgmma_desc_advance(wgmma_desc_k_major(addr, s, 0x3FFF0), off),
                  wgmma_desc_k_major(addr + off, s, 0x3FFF0));
        ++checked;
      }
  EXPECT_GT(checked, 4000);
  // The largest address reached from 0 in one step; the field's carry would corrupt bit 14 and
  // LBO, which is why the sum must stay under 256 KiB (an advance past it is not an encoding).
  EXPECT_EQ(wgmma_desc_advance(wgmma_desc_k_major(0, WgmmaSwizzle::b128, 1024), 0x3FFF0),
            wgmma_desc_k_major(0x3FFF0, WgmmaSwizzle::b128, 1024));
  EXPECT_NE(wgmma_desc_advance(wgmma_desc_k_major(0x3FFF0, WgmmaSwizzle::b128, 1024), 16),
            wgmma_desc_k_major(0x40000, WgmmaSwizzle::b128, 1024));
}

TEST(WgmmaDescriptor, MajorHelpersPutStridesInTheirFields) {
  // K-major: SBO is the 8-row atom stride, LBO the unused 16 bytes (CuTe's value).
  static_assert(wgmma_desc_k_major(0x400, WgmmaSwizzle::b128, 1024) ==
                wgmma_desc_encode(0x400, 16, 1024, WgmmaSwizzle::b128));
  // MN-major: LBO is the stride between atoms along M/N, SBO between 8-row groups along K.
  static_assert(wgmma_desc_mn_major(0x800, WgmmaSwizzle::b128, 8192, 1024) ==
                (0x80ull | (8192ull >> 4) << 16 | (1024ull >> 4) << 32 | 1ull << 62));
  static_assert(wgmma_swizzle_span(WgmmaSwizzle::b128) == 128 &&
                wgmma_swizzle_span(WgmmaSwizzle::b64) == 64 &&
                wgmma_swizzle_span(WgmmaSwizzle::b32) == 32 &&
                wgmma_swizzle_span(WgmmaSwizzle::none) == 16);
  SUCCEED();
}

TEST(WgmmaDescriptor, SwizzledModelMatchesTheTmaBoxLayout) {
  // A k16 slice of a K-major operand read from an atom-aligned start is the TMA box's rows,
  // swizzled as swizzle.hpp says, for every span.
  for (WgmmaSwizzle s : {WgmmaSwizzle::b128, WgmmaSwizzle::b64, WgmmaSwizzle::b32}) {
    const uint32_t span = wgmma_swizzle_span(s);
    for (uint32_t mn = 0; mn < 64; ++mn)
      for (uint32_t k = 0; k < 16; ++k) {
        const uint32_t linear = mn * span + k * 2;
        const uint32_t want = span == 128  ? swizzle<128>(linear)
                              : span == 64 ? swizzle<64>(linear)
                                           : swizzle<32>(linear);
        ASSERT_EQ(wgmma_swizzled_offset(s, false, 0, 16, 8 * span, mn, k), want)
            << span << " " << mn << " " << k;
      }
  }
}

// Decodes `desc` (made with A's or B's base at address 0) and returns where wgmma reads element
// (mn, k) of it under the PTX canonical layout.
uint32_t wgmma_reads(uint64_t desc, bool mn_major, int mn, int k) {
  const WgmmaDescFields f = wgmma_desc_decode(desc);
  EXPECT_EQ(f.base_offset, 0u);
  return wgmma_swizzled_offset(f.swizzle, mn_major, f.start, f.lbo, f.sbo, uint32_t(mn),
                               uint32_t(k));
}

template <int kBlockM, int kBlockN>
void check_wgmma_stage() {
  using Stage = klab::hgemm::WgmmaStage<kBlockM, kBlockN>;
  // A: K-major, m64 blocks x k16 slices: wgmma's (row, k) is the TMA box's (64 m64 + row, 16 kk + k).
  for (int m64 = 0; m64 < kBlockM / 64; ++m64)
    for (int kk = 0; kk < Stage::kBlockK / 16; ++kk)
      for (int row = 0; row < 64; ++row)
        for (int k = 0; k < 16; ++k)
          ASSERT_EQ(wgmma_reads(Stage::desc_a(0, m64, kk), false, row, k),
                    Stage::offset_a(64 * m64 + row, 16 * kk + k))
              << "A m64 " << m64 << " kk " << kk << " row " << row << " k " << k;
  // B: MN-major (the transposed-B form), one descriptor spanning every panel of the stage.
  for (int kk = 0; kk < Stage::kBlockK / 16; ++kk)
    for (int n = 0; n < kBlockN; ++n)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(wgmma_reads(Stage::desc_b(0, kk), true, n, k), Stage::offset_b(16 * kk + k, n))
            << "B kk " << kk << " n " << n << " k " << k;
  // A descriptor starting at a later panel reads that panel's columns.
  for (int n = 0; n < 64; ++n)
    ASSERT_EQ(wgmma_reads(Stage::desc_b(0, 1, Stage::kPanels - 1), true, n, 3),
              Stage::offset_b(16 + 3, 64 * (Stage::kPanels - 1) + n));
  // Every element of the stage has its own bytes.
  std::set<uint32_t> seen;
  for (int r = 0; r < kBlockM; ++r)
    for (int k = 0; k < 64; ++k) seen.insert(Stage::offset_a(r, k));
  for (int k = 0; k < 64; ++k)
    for (int n = 0; n < kBlockN; ++n) seen.insert(Stage::kBytesA + Stage::offset_b(k, n));
  EXPECT_EQ(seen.size(), size_t(kBlockM * 64 + 64 * kBlockN));
  EXPECT_EQ(*seen.rbegin(), Stage::kBytes - 2);
}

TEST(WgmmaDescriptor, HgemmStagesAreReadWhereTheTmaWroteThem) {
  check_wgmma_stage<128, 128>();
  check_wgmma_stage<128, 256>();
  check_wgmma_stage<64, 192>();
}

// v19's swapped operands: B's panels as wgmma's A (MN-major, M = 64 columns of B), the tokens
// as its B (K-major, N = kTok rows of A).
template <int kBlocks, int kTok>
void check_swap_ab_stage() {
  using Stage = klab::hgemm::SwapAbStage<kBlocks, kTok>;
  for (int j = 0; j < kBlocks; ++j)
    for (int kk = 0; kk < Stage::kBlockK / 16; ++kk)
      for (int col = 0; col < 64; ++col)
        for (int k = 0; k < 16; ++k)
          ASSERT_EQ(wgmma_reads(Stage::desc_b(0, j, kk), true, col, k),
                    Stage::offset_b(16 * kk + k, 64 * j + col))
              << "B block " << j << " kk " << kk << " col " << col << " k " << k;
  for (int kk = 0; kk < Stage::kBlockK / 16; ++kk)
    for (int tok = 0; tok < kTok; ++tok)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(wgmma_reads(Stage::desc_a(0, kk), false, tok, k),
                  Stage::offset_a(tok, 16 * kk + k))
            << "A kk " << kk << " tok " << tok << " k " << k;
  std::set<uint32_t> seen;
  for (int k = 0; k < 64; ++k)
    for (int n = 0; n < Stage::kBlockN; ++n) seen.insert(Stage::offset_b(k, n));
  for (int tok = 0; tok < kTok; ++tok)
    for (int k = 0; k < 64; ++k) seen.insert(Stage::offset_a(tok, k));
  EXPECT_EQ(seen.size(), size_t(Stage::kBlockN * 64 + kTok * 64));
  EXPECT_EQ(*seen.rbegin(), Stage::kBytes - 2);
  // The token-split entries: the TMA writes a (64 n, 32 k-rows) box at kHalfPanelBytes h into a
  // panel, laid out as its own box (k-row r of the box at swizzle_128b(r x 128 + 2 n) from where
  // it starts); that must be where the stage reads k-row 32 h + r.
  for (int j = 0; j < kBlocks; ++j)
    for (int h = 0; h < 2; ++h)
      for (int r = 0; r < 32; ++r)
        for (int n = 0; n < 64; ++n)
          ASSERT_EQ(
              j * Stage::kPanelBytes + h * Stage::kHalfPanelBytes +
                  klab::device::swizzle_128b(uint32_t(r) * Stage::kRowBytes + uint32_t(n) * 2),
              Stage::offset_b(32 * h + r, 64 * j + n))
              << "block " << j << " half " << h << " row " << r << " n " << n;
}

TEST(WgmmaDescriptor, SwapAbStagesAreReadWhereTheTmaWroteThem) {
  check_swap_ab_stage<1, 8>();  // the token-split entries' halves of 16, 64 and 128 tokens
  check_swap_ab_stage<1, 32>();
  check_swap_ab_stage<1, 16>();
  check_swap_ab_stage<3, 16>();
  check_swap_ab_stage<1, 64>();
  check_swap_ab_stage<3, 64>();
  check_swap_ab_stage<2, 8>();
  check_swap_ab_stage<1, 128>();
  check_swap_ab_stage<3, 128>();
}

TEST(SwapAbPlan, EntriesFillOneWaveAtQwenShapes) {
  using namespace klab::hgemm;
  // One CTA an SM on 132 SMs; clusters of 4 fill 120 of them (whole GPCs only), pairs 132.
  auto resident = [](int i) { return kV19Entries[i].splits == 4 ? 120 : 132; };
  EXPECT_EQ(v19_entry(24576, 4096, resident), 0);  // 128 slabs of 192
  EXPECT_EQ(v19_entry(4096, 4096, resident), 1);   // 64 slabs of 64 x 2 splits
  EXPECT_EQ(v19_entry(4096, 12288, resident), 1);
  EXPECT_EQ(v19_entry(6144, 4096, resident), 3);  // 96 slabs of 64: clusters of 4 take two waves
  // An entry that does not fit at all is never taken.
  auto no_pairs = [](int i) { return kV19Entries[i].splits == 1 ? 132 : 0; };
  EXPECT_EQ(kV19Entries[v19_entry(4096, 4096, no_pairs)].splits, 1);
  EXPECT_EQ(v19_tokens(1), 16);
  EXPECT_EQ(v19_tokens(16), 16);
  EXPECT_EQ(v19_tokens(17), 64);
  EXPECT_EQ(v19_tokens(64), 64);
  EXPECT_EQ(v19_tokens(65), 128);
  EXPECT_EQ(v19_tokens(kV19MaxTokens), 128);
}

// ---- wgmma accumulator fragment ----

TEST(WgmmaFragment, AccumulatorsCoverTheTileOnce) {
  for (int n : {8, 16, 32, 64, 128, 192, 256}) {
    std::vector<int> count(size_t(64 * n), 0);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const WgmmaAccCoord c = wgmma_acc_coord(t, i);
        ASSERT_TRUE(c.row >= 0 && c.row < 64 && c.col >= 0 && c.col < n);
        ++count[size_t(c.row * n + c.col)];
        if (i % 2 == 1) {  // pairs are row neighbours (one 2-element store)
          const WgmmaAccCoord p = wgmma_acc_coord(t, i - 1);
          ASSERT_TRUE(p.row == c.row && p.col + 1 == c.col && p.col % 2 == 0);
        }
      }
    for (int v : count) ASSERT_EQ(v, 1) << "n " << n;
  }
  // The PTX figure's first entries: thread 0 holds (0,0) (0,1) (8,0) (8,1); thread 37 (warp 1,
  // lane 5) register 5 sits at row 16 + 1 + 8, column 8 + 2 + 1.
  static_assert(wgmma_acc_coord(0, 2).row == 8 && wgmma_acc_coord(0, 2).col == 0);
  static_assert(wgmma_acc_coord(37, 7).row == 25 && wgmma_acc_coord(37, 7).col == 11);
  SUCCEED();
}

// ---- stmatrix of wgmma accumulators into the TMA-store box ----

// Simulates each warp's stmatrix.x4 number q (0 .. stores - 1) into a box of `bytes`: the element
// in register i, half h, of lane l goes where element(l, i, h) says, at the address that the lane
// holding that matrix row supplied (stmatrix_offset(thread, q)) plus its column; it must be
// at_acc(row, col), the TMA's offset of the accumulator 8q + 2i + h it was packed from
// (wgmma_acc_coord). Each byte pair of the box is written once, and one matrix's 8 supplied rows
// fall in 8 different 16-byte chunks of their 128-byte rows (no bank conflict).
template <class Element, class Supplied, class AtAcc>
void check_stmatrix_box(uint32_t bytes, int stores, Element element, Supplied stmatrix_offset,
                        AtAcc at_acc) {
  std::vector<int> count(bytes / 2, 0);
  for (int t = 0; t < 128; ++t) {
    const int warp0 = t - t % 32, l = t % 32;
    for (int q = 0; q < stores; ++q)
      for (int i = 0; i < 4; ++i)
        for (int h = 0; h < 2; ++h) {
          const StmatrixCoord e = element(l, i, h);
          const int supplier = 8 * e.matrix + e.row;  // the lane holding that matrix row's address
          const StmatrixCoord r = stmatrix_row_of_lane(supplier);
          ASSERT_TRUE(r.matrix == e.matrix && r.row == e.row);
          const uint32_t at = stmatrix_offset(warp0 + supplier, q) + uint32_t(e.col) * 2;
          const WgmmaAccCoord c = wgmma_acc_coord(t, 8 * q + 2 * i + h);
          ASSERT_EQ(at, at_acc(c.row, c.col)) << "t " << t << " q " << q << " i " << i;
          ++count[at / 2];
        }
  }
  for (int v : count) ASSERT_EQ(v, 1) << "the box is written once";
  for (int t = 0; t < 128; t += 8)
    for (int q = 0; q < stores; ++q) {
      std::set<uint32_t> chunks;
      for (int r = 0; r < 8; ++r) {
        const uint32_t a = stmatrix_offset(t + r, q);
        ASSERT_EQ(a % 16, 0u);
        chunks.insert(a % 128 / 16);
      }
      EXPECT_EQ(chunks.size(), 8u) << "t " << t << " q " << q;
    }
}

TEST(WgmmaStore, StmatrixPutsEachAccumulatorWhereTheTmaReadsIt) {
  // hgemm v14's epilogue: a box of 64 accumulator rows by 64 columns (32 accumulators a thread),
  // stored as it is.
  using Box = klab::hgemm::WgmmaStoreBox;
  check_stmatrix_box(Box::kBytes, Box::kCols / 16, stmatrix_element, Box::stmatrix_offset,
                     [](int row, int col) { return Box::offset(row, col); });
  // The box is the TMA's 128-byte-swizzled layout of a 64 x 64 16-bit box: (0, 8) is the second
  // chunk of row 0; (1, 0) swaps with (1, 8) in row 1.
  static_assert(Box::offset(0, 8) == 16 && Box::offset(1, 0) == 128 + 16 &&
                Box::offset(1, 8) == 128 && Box::offset(63, 63) == 63 * 128 + (7 ^ 7) * 16 + 14);
}

TEST(SwapAbStore, StmatrixTransPutsEachAccumulatorWhereTheTmaReadsIt) {
  // hgemm v19's epilogue: one m64 block's accumulators (rows: 64 columns of C; columns: the kTok
  // tokens) stored transposed, into the (64 columns, kTok tokens) box C(token, column).
  auto check = [](auto box) {
    using Box = decltype(box);
    check_stmatrix_box(Box::kBytes, Box::kRows / 16, stmatrix_trans_element, Box::stmatrix_offset,
                       [](int row, int col) { return Box::offset(col, row); });
  };
  check(klab::hgemm::SwapAbStoreBox<16>{});
  check(klab::hgemm::SwapAbStoreBox<64>{});
  check(klab::hgemm::SwapAbStoreBox<128>{});
  // Token 1's columns 0-7 sit in the second chunk of its row (the swizzle's XOR with row 1).
  static_assert(klab::hgemm::SwapAbStoreBox<16>::offset(1, 0) == 128 + 16);
}

TEST(SplitK, SplitsCoverEveryKTileOnceAndFillOneWave) {
  // hgemm v16's plan: no split empty, every k-tile in exactly one split (in order), no more CTAs
  // than one wave unless the slabs alone exceed it, splits at least min_k_tiles long when there
  // is more than one, and the workspace slices of the splits disjoint and dense.
  using klab::hgemm::plan_split_k;
  using klab::hgemm::SplitKPlan;
  for (int64_t n : {8, 64, 136, 4096, 6144, 24576, 100000})
    for (int64_t k : {8, 64, 72, 520, 4096, 12288})
      for (int slots : {1, 132, 264}) {
        const SplitKPlan p = plan_split_k(n, k, 128, 64, slots, 8);
        ASSERT_EQ(p.tiles_n, (n + 127) / 128);
        ASSERT_EQ(p.k_tiles, (k + 63) / 64);
        ASSERT_GE(p.splits, 1);
        int next = 0;
        for (int s = 0; s < p.splits; ++s) {
          ASSERT_EQ(p.k_begin(s), next) << "n " << n << " k " << k << " s " << s;
          ASSERT_GT(p.k_end(s), p.k_begin(s)) << "split " << s << " is empty";
          if (p.splits > 1) {
            ASSERT_GE(p.k_end(s) - p.k_begin(s), s + 1 < p.splits ? 8 : 1);
          }
          next = p.k_end(s);
        }
        ASSERT_EQ(next, p.k_tiles) << "n " << n << " k " << k;
        if (p.splits > 1) {
          ASSERT_LE(int64_t(p.splits) * p.tiles_n, slots);
        }
      }
  // The workspace: split-major row-major slices, one float per (split, row, column), no gaps.
  const int m = 5, n = 24, splits = 3;
  std::vector<int> hits(size_t(splits) * m * n, 0);
  for (int s = 0; s < splits; ++s)
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) ++hits.at(SplitKPlan::workspace_index(s, r, c, m, n));
  for (int h : hits) ASSERT_EQ(h, 1);
  EXPECT_EQ((SplitKPlan{1, 64, 4, 16}.workspace_floats(m, n)), size_t(4) * m * n);
  EXPECT_EQ((SplitKPlan{1, 64, 1, 64}.workspace_floats(m, n)), 0u) << "one split stores C itself";
  // The shapes the worklog names: N = 24576 fills a wave with its 192 slabs; N = 4096 splits 8.
  EXPECT_EQ(plan_split_k(24576, 4096, 128, 64, 264, 8).splits, 1);
  EXPECT_EQ(plan_split_k(4096, 4096, 128, 64, 264, 8).splits, 8);
  EXPECT_EQ(plan_split_k(6144, 4096, 128, 64, 264, 8).splits, 5);
}

TEST(SplitKUnits, CoverEveryTileAndSplitOnceSplitMajor) {
  // v18's persistent units: every (tile, split) pair once; a tile's splits tiles apart.
  for (int tiles_m : {1, 3, 16, 33})
    for (int tiles_n : {1, 5, 16})
      for (int splits : {1, 2, 4, 8}) {
        const int tiles = tiles_m * tiles_n;
        std::set<std::array<int, 3>> seen;
        for (int u = 0; u < tiles * splits; ++u) {
          const SplitKUnit w = split_k_unit(u, 16, tiles_m, tiles_n);
          ASSERT_GE(w.m, 0);
          ASSERT_LT(w.m, tiles_m);
          ASSERT_GE(w.n, 0);
          ASSERT_LT(w.n, tiles_n);
          ASSERT_EQ(w.split, u / tiles);
          const SplitKUnit first = split_k_unit(u % tiles, 16, tiles_m, tiles_n);
          ASSERT_EQ(w.m, first.m);
          ASSERT_EQ(w.n, first.n);
          seen.insert({w.m, w.n, w.split});
        }
        ASSERT_EQ(int(seen.size()), tiles * splits);
      }
}

TEST(StreamKPlan, PiecesCoverEveryUnitOnceAndSegmentsMapToDistinctSlots) {
  using klab::hgemm::plan_stream_k;
  using klab::hgemm::StreamKPlan;
  for (int64_t n : {8, 128, 136, 4096, 6144, 24576})
    for (int64_t k : {8, 64, 72, 4096, 12288})
      for (int slots : {1, 7, 132, 264}) {
        const StreamKPlan p = plan_stream_k(n, k, 128, 64, slots);
        ASSERT_GE(p.ctas, 1);
        ASSERT_LE(p.ctas, slots);
        ASSERT_LE(int64_t(p.ctas), p.units());
        // Pieces: contiguous, in order, sizes within one unit of each other, none empty.
        int64_t lo = p.units(), hi = 0;
        for (int c = 0; c < p.ctas; ++c) {
          const int64_t size = p.begin(c + 1) - p.begin(c);
          lo = std::min(lo, size);
          hi = std::max(hi, size);
          for (int64_t u : {p.begin(c), p.begin(c + 1) - 1}) ASSERT_EQ(p.cta_of(u), c) << u;
        }
        ASSERT_EQ(p.begin(p.ctas), p.units());
        ASSERT_GE(lo, 1);
        ASSERT_LE(hi - lo, 1);
        // Every slab: its segments, CTA by CTA, tile its k-tiles exactly; slots distinct and
        // inside the workspace.
        std::set<int64_t> slots_seen;
        for (int t = 0; t < p.tiles_n; ++t) {
          int next = 0;
          for (int c = p.first_cta(t); c <= p.last_cta(t); ++c) {
            ASSERT_EQ(p.seg_begin(c, t), next) << "n " << n << " k " << k << " slab " << t;
            ASSERT_GT(p.seg_end(c, t), p.seg_begin(c, t));
            next = p.seg_end(c, t);
            const int64_t s = p.slot(c, t);
            ASSERT_GE(s - int64_t(c) * p.slots_per_cta(), 0);
            ASSERT_LT(s - int64_t(c) * p.slots_per_cta(), p.slots_per_cta());
            ASSERT_TRUE(slots_seen.insert(s).second);
          }
          ASSERT_EQ(next, p.k_tiles);
        }
      }
  // N = 24576, K = 4096 on 132 CTAs: 192 slabs of 64 k-tiles, pieces of 93-94 k-tiles.
  const StreamKPlan q = plan_stream_k(24576, 4096, 128, 64, 132);
  EXPECT_EQ(q.units(), 12288);
  EXPECT_EQ(q.begin(1), 93);
  EXPECT_EQ(q.slots_per_cta(), 3);
}

// v21's plan, simulated: every (tile, k-tile) unit is run by exactly one CTA; whole waves are
// whole tiles; each stream-K tile's segments tile its k-tiles, the owner's holding k-tile 0 and
// being the last of its piece, every contributor's the first of its own (so one workspace slot a
// CTA holds it); and the owner waits only for later CTAs.
TEST(StreamKTilesPlan, WavesAndPiecesRunEveryUnitOnceOwnersWaitForward) {
  using klab::hgemm::plan_stream_k_tiles;
  using klab::hgemm::StreamKTilesPlan;
  for (int64_t tiles : {1, 5, 64, 96, 128, 131, 132, 133, 256, 512, 1316})
    for (int64_t k_tiles : {1, 2, 64, 79, 192})
      for (int slots : {1, 7, 132})
        for (int sk_waves : {0, 1}) {
          const StreamKTilesPlan p = plan_stream_k_tiles(tiles, k_tiles, slots, sk_waves);
          ASSERT_EQ(p.ctas, std::min<int64_t>(tiles * k_tiles, slots));
          ASSERT_EQ(p.dp_tiles % p.ctas, 0);
          ASSERT_LE(p.dp_tiles, p.tiles);
          if (tiles % p.ctas == 0) ASSERT_EQ(p.dp_tiles, p.tiles);  // whole waves: no stream-K
          if (p.sk_tiles() > 0) {
            // The stream-K line spreads over the grid (fewer pieces only when it is that short).
            ASSERT_EQ(p.line.ctas, std::min<int64_t>(p.ctas, p.line.units()));
            ASSERT_LT(p.sk_tiles(), (1 + sk_waves) * p.ctas);
          }
          std::vector<int> runs(size_t(tiles * k_tiles), 0);
          for (int c = 0; c < p.ctas; ++c) {
            for (int t = c; t < p.dp_tiles; t += p.ctas)
              for (int64_t kt = 0; kt < k_tiles; ++kt) ++runs[size_t(t * k_tiles + kt)];
            if (c >= p.line.ctas) continue;
            for (int s = p.first_tile(c); s <= p.last_tile(c); ++s) {
              const int b = p.line.seg_begin(c, s), e = p.line.seg_end(c, s);
              ASSERT_LT(b, e);
              for (int kt = b; kt < e; ++kt) ++runs[size_t((p.dp_tiles + s) * k_tiles + kt)];
              const bool whole = b == 0 && e == k_tiles;
              if (whole) continue;
              if (b == 0) {  // the owner: its piece's last segment
                ASSERT_EQ(p.owner(s), c);
                ASSERT_EQ(s, p.last_tile(c));
                ASSERT_GT(p.contributors(s), 0);
              } else {  // a contributor: its piece's first segment, a later CTA than the owner
                ASSERT_EQ(s, p.first_tile(c));
                ASSERT_GT(c, p.owner(s));
                ASSERT_LE(c, p.owner(s) + p.contributors(s));
              }
            }
          }
          for (size_t u = 0; u < runs.size(); ++u)
            ASSERT_EQ(runs[u], 1) << "tiles " << tiles << " k_tiles " << k_tiles << " slots "
                                  << slots << " unit " << u;
        }
  // 4096^3 on 128 x 256 tiles, 132 SMs: 512 tiles, three whole waves (396), 116 tiles of 64
  // k-tiles in pieces of 56-57; M = 512, N = 4096: 64 tiles, all in pieces of 31-32 k-tiles
  // over every SM.
  const StreamKTilesPlan sq = plan_stream_k_tiles(512, 64, 132);
  EXPECT_EQ(sq.dp_tiles, 396);
  EXPECT_EQ(sq.line.begin(1), 56);
  const StreamKTilesPlan m512 = plan_stream_k_tiles(64, 64, 132);
  EXPECT_EQ(m512.dp_tiles, 0);
  EXPECT_EQ(m512.ctas, 132);
  EXPECT_EQ(m512.line.begin(1), 31);
}

// v22's aligned order, simulated: each CTA runs its piece's segments in reverse; at most two of
// them are split (its last and first tiles'), and they take distinct slots; each split tile's
// segments are CTAs first_cta .. + segments - 1, the first holding k-tile 0 (the sum in CTA
// order starts from it, as v21's owner's); and at every step of the pieces the CTAs' k-tiles
// stay within one jump (64 - the piece) of each other where v21's spread over K.
TEST(StreamKTilesPlan, AlignedOrderWalksKTogetherWithTwoSlotsACta) {
  using klab::hgemm::plan_stream_k_tiles;
  using klab::hgemm::StreamKTilesPlan;
  // The k-tile CTA c works on at each step of its piece, in v21's order or v22's.
  auto k_walk = [](const StreamKTilesPlan& p, int c, bool aligned) {
    std::vector<int> ks;
    const int first = p.first_tile(c), last = p.last_tile(c);
    for (int i = 0; i <= last - first; ++i) {
      const int s = aligned ? last - i : first + i;
      for (int kt = p.line.seg_begin(c, s); kt < p.line.seg_end(c, s); ++kt) ks.push_back(kt);
    }
    return ks;
  };
  // The widest spread of the CTAs' k-tiles over the steps every piece still runs.
  auto spread = [&](const StreamKTilesPlan& p, bool aligned) {
    std::vector<std::vector<int>> walks;
    size_t steps = SIZE_MAX;
    for (int c = 0; c < p.line.ctas; ++c) {
      walks.push_back(k_walk(p, c, aligned));
      steps = std::min(steps, walks.back().size());
    }
    int widest = 0;
    for (size_t t = 0; t < steps; ++t) {
      int lo = INT_MAX, hi = INT_MIN;
      for (const auto& w : walks) lo = std::min(lo, w[t]), hi = std::max(hi, w[t]);
      widest = std::max(widest, hi - lo);
    }
    return widest;
  };
  for (int64_t tiles : {1, 5, 64, 96, 128, 131, 133, 256, 512, 1316})
    for (int64_t k_tiles : {1, 2, 64, 79, 192})
      for (int slots : {1, 7, 132})
        for (int sk_waves : {0, 1}) {
          const StreamKTilesPlan p = plan_stream_k_tiles(tiles, k_tiles, slots, sk_waves);
          std::vector<int> counted(size_t(p.sk_tiles()), 0);
          for (int c = 0; c < p.line.ctas; ++c) {
            int split = 0, slot_used[2] = {0, 0};
            for (int s = p.first_tile(c); s <= p.last_tile(c); ++s) {
              const int b = p.line.seg_begin(c, s), e = p.line.seg_end(c, s);
              if (b == 0 && e == k_tiles) {
                ASSERT_EQ(p.segments(s), 1);
                continue;
              }
              ++split;
              ++counted[size_t(s)];
              const int slot = p.aligned_slot(c, s);
              ASSERT_TRUE(slot == 0 || slot == 1);
              ++slot_used[slot];
              ASSERT_GE(c, p.line.first_cta(s));
              ASSERT_LT(c, p.line.first_cta(s) + p.segments(s));
              if (c == p.line.first_cta(s)) {
                ASSERT_EQ(b, 0);  // the sum starts at k-tile 0
              }
            }
            ASSERT_LE(split, 2);
            ASSERT_LE(slot_used[0], 1);
            ASSERT_LE(slot_used[1], 1);
          }
          for (int s = 0; s < p.sk_tiles(); ++s)
            if (p.segments(s) > 1) {
              ASSERT_EQ(counted[size_t(s)], p.segments(s)) << s;
            }
        }
  // 4096^3's tail (116 tiles of 64 k-tiles, pieces of 56-57): v22's CTAs within 8 k-tiles of
  // each other at every step, v21's all over K. M = 512, N = 4096 (64 tiles, pieces of 31-32):
  // narrower too.
  const StreamKTilesPlan sq = plan_stream_k_tiles(512, 64, 132);
  EXPECT_LE(spread(sq, true), 8);
  EXPECT_GE(spread(sq, false), 48);
  const StreamKTilesPlan m512 = plan_stream_k_tiles(64, 64, 132);
  EXPECT_LE(spread(m512, true), 33);
  EXPECT_GE(spread(m512, false), 48);
}

}  // namespace
}  // namespace klab::device

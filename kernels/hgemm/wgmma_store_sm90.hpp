#pragma once
// The shared-memory C box of the TMA-store epilogue (hgemm v14): one warpgroup's 64 rows x 64
// columns of 16-bit C, 128-byte rows, laid out as the TMA reads a box with
// CU_TENSOR_MAP_SWIZZLE_128B (swizzle.hpp; 1024-byte aligned), written from the wgmma
// accumulators by stmatrix (stmatrix_fragment.hpp). The swizzle is also what keeps stmatrix free
// of bank conflicts: the 8 rows of one matrix are 128 bytes apart, and the XOR puts their 16-byte
// segments in 8 different chunks (all 32 banks). Host-and-device constexpr: the CPU tests check,
// element by element, that each accumulator lands where the TMA reads its (row, column).
#include <cstdint>

#include "klab/device/stmatrix_fragment.hpp"
#include "klab/device/swizzle.hpp"

namespace klab::hgemm {

/// kRows rows of 64 16-bit columns (128 bytes each), as the TMA reads a (64, kRows) box with
/// CU_TENSOR_MAP_SWIZZLE_128B, written by stmatrix.x4 number q (16 accumulator columns each) of a
/// warpgroup's 64 x N accumulators: as they are (v14: the box is the tile's 64 rows), or
/// transposed (kTransposed, v19: the accumulators' columns become the box's kRows rows).
template <int kRows_ = 64, bool kTransposed = false>
struct StmatrixStoreBox {
  static constexpr int kRows = kRows_, kCols = 64;
  static constexpr uint32_t kRowBytes = 128, kBytes = kRows * kRowBytes;
  static_assert(kRows % 16 == 0, "whole stmatrix.x4 (16 rows or accumulator columns each)");

  /// Where the TMA reads C(row, col) of the box (bytes from the box's start).
  static constexpr uint32_t offset(int row, int col) {
    return device::swizzle_128b(uint32_t(row) * kRowBytes + uint32_t(col) * 2);
  }

  /// The address (bytes from the box's start) that warpgroup thread t supplies to stmatrix.x4
  /// number q (plain: columns 16q .. 16q + 15 of the box; transposed: its rows 16q .. 16q + 15).
  static constexpr uint32_t stmatrix_offset(int t, int q) {
    const device::WgmmaStmatrixRow r =
        kTransposed ? device::wgmma_stmatrix_trans_row(t, q) : device::wgmma_stmatrix_row(t, q);
    return device::swizzle_128b_chunk(r.row, r.col / 8);
  }
};

/// v14's box: one warpgroup's m64 rows by 64 columns.
using WgmmaStoreBox = StmatrixStoreBox<>;

}  // namespace klab::hgemm

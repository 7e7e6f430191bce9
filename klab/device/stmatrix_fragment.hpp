#pragma once
// Where stmatrix (sm_90; PTX ISA "stmatrix") puts each 16-bit element, and how a wgmma f32
// accumulator fragment (wgmma_fragment.hpp) maps onto it once packed to 16-bit pairs. One
// stmatrix.m8n8.x4 of a warp stores four 8 x 8 matrices: lane l supplies the shared-memory
// address of row l % 8 of matrix l / 8 (16 contiguous bytes), and its register i holds the
// element pair (l / 4, 2 (l % 4) + 0..1) of matrix i. Plain constexpr arithmetic, checked by the
// CPU tests.
#include "klab/device/host_device.hpp"

namespace klab::device {

struct StmatrixCoord {
  int matrix, row, col;
};

/// The (matrix, row, column) of the 8 x 8 matrix that element h (0..1) of register `reg` (0..3)
/// of `lane` is stored to.
KLAB_HOST_DEVICE constexpr StmatrixCoord stmatrix_element(int lane, int reg, int h) {
  return {reg, lane / 4, 2 * (lane % 4) + h};
}

/// The (matrix, row) whose 16-byte row `lane` supplies the address of.
KLAB_HOST_DEVICE constexpr StmatrixCoord stmatrix_row_of_lane(int lane) {
  return {lane / 8, lane % 8, 0};
}

struct WgmmaStmatrixRow {
  int row, col;  // the row and first column in the warpgroup's 64 x N accumulator tile
};

/// stmatrix.x4 number q of warpgroup thread t (warp w, lane l) stores the accumulator registers
/// 8q .. 8q + 7 of its warp: columns 16q .. 16q + 15 of rows 16w .. 16w + 15, as matrices
/// (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15),
/// register i packing accumulators 8q + 2i and 8q + 2i + 1. The 8 columns of 16 bits whose
/// address lane l supplies start at this (row, col) of the tile.
KLAB_HOST_DEVICE constexpr WgmmaStmatrixRow wgmma_stmatrix_row(int t, int q) {
  const int w = t / 32, l = t % 32, matrix = l / 8;
  return {16 * w + 8 * (matrix % 2) + l % 8, 16 * q + 8 * (matrix / 2)};
}

/// stmatrix.x4.trans (each matrix stored transposed): element h of register `reg` of `lane` goes
/// to row 2 (lane % 4) + h, column lane / 4 of matrix `reg`; lane l still supplies the address of
/// row l % 8 of matrix l / 8.
KLAB_HOST_DEVICE constexpr StmatrixCoord stmatrix_trans_element(int lane, int reg, int h) {
  return {reg, 2 * (lane % 4) + h, lane / 4};
}

/// stmatrix.x4.trans number q of warpgroup thread t stores wgmma_stmatrix_row's registers
/// transposed: the warp's accumulator rows 16w .. 16w + 15 become columns of the stored tile and
/// its accumulator columns 16q .. 16q + 15 rows (a 64 x N accumulator tile lands as N x 64). The
/// 8 columns of 16 bits whose address lane l supplies start at this (row, col) of that tile.
KLAB_HOST_DEVICE constexpr WgmmaStmatrixRow wgmma_stmatrix_trans_row(int t, int q) {
  const int w = t / 32, l = t % 32, matrix = l / 8;
  return {16 * q + 8 * (matrix / 2) + l % 8, 16 * w + 8 * (matrix % 2)};
}

}  // namespace klab::device

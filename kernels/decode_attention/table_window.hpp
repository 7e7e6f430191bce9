#pragma once
// v38's windows of block-table columns (tma_pages_kernel's kTableWindow): which window holds a
// stage's page indices and which lane of it holds each one. Host and device: the producer warp
// holds the entries (TableWindow, tma_pages.cuh), and the CPU tests walk every split's stages at
// every page size to check that each stage's pages come from the window in use, none wrapping.
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::decode_attention {

/// A split's table columns in windows of kColumns from c0 (its first stage's first column): lane
/// l of window w holds column c0 + 32 w + l. The walk's window `w` is the one in use; a stage
/// whose first column lies past it moves it on by one, and the caller then requests window w + 1.
/// A stage's pages never straddle two windows: a stage starts at a multiple of 64 keys, so its
/// first column, counted from c0, is a multiple of its page count (64 / P for pages of P <= 64,
/// else 1), which divides 32. Stages must come in order, each at most one window past the
/// previous (consecutive stages of 64 keys advance 64 / P <= 8 columns).
struct TableWindowIndex {
  static constexpr int kColumns = 32;
  int64_t c0 = 0;
  int w = 0;
  /// The column lane `lane` of window `win` loads.
  KLAB_HOST_DEVICE constexpr int64_t column(int win, int lane) const {
    return c0 + int64_t(win) * kColumns + lane;
  }
  /// The window of the stage whose first column is `col` made the one in use: true when it moved
  /// on (the window after it is due).
  KLAB_HOST_DEVICE constexpr bool advance(int64_t col) {
    if (col - c0 < int64_t(w + 1) * kColumns) return false;
    ++w;
    return true;
  }
  /// The lane of the window in use that holds column col + page (a stage's page `page`, for
  /// pages below its count), taken modulo the warp for the others (whose value is unused).
  KLAB_HOST_DEVICE constexpr int source_lane(int64_t col, int page) const {
    return static_cast<int>(col - c0 - int64_t(w) * kColumns + page) & (kColumns - 1);
  }
};

}  // namespace klab::decode_attention

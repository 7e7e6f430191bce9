#pragma once
// Where a wgmma accumulator register lives in its 64 x N tile (PTX ISA, "Register Fragments" of
// wgmma .m64nNk16 with an f32 D): thread t of the warpgroup (warp w = t / 32, lane l = t % 32)
// holds for n8 block j the floats d[4j + 0..1] at (16w + l/4, 8j + 2(l%4) + 0..1) and d[4j + 2..3]
// eight rows below. Plain constexpr arithmetic, checked by the CPU tests.
#include "klab/device/host_device.hpp"

namespace klab::device {

struct WgmmaAccCoord {
  int row, col;
};

/// The (row, column) in the 64 x N tile of accumulator register i (0..N/2-1) of warpgroup thread
/// t (0..127). Registers 2p and 2p+1 are neighbours in one row (a 2-element vector store).
KLAB_HOST_DEVICE constexpr WgmmaAccCoord wgmma_acc_coord(int t, int i) {
  const int w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2};
}

}  // namespace klab::device

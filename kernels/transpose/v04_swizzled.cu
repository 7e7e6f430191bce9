// v04 swizzled tile: no padding; element (r, c) is stored at column c XOR r of row r.
// Adds over v03: the same conflict-freedom without wasting shared memory or breaking the
// tile's alignment (a padded row is not 16-byte aligned, a swizzled one is — v05 needs that).
// A row write (fixed r, lanes c = 0..31) is a permutation of the row (in bf16, 16 words, two
// lanes per word). A column read (fixed c, lanes r = 0..31) hits column c ^ r: 32 distinct banks
// in f32; in bf16 a row is 16 words, lanes r and r ^ 1 read the same (c ^ r) / 2 word offset
// from rows that start 16 banks apart, and the 16 pairs have distinct offsets: 32 banks again.
// Expected bottleneck: as v03 (4 scalar loads in flight per thread); one XOR more per access.
// Predicted: equal to v03, 75-85% of copy (f32).
// Requirements: none.
#include "kernels/transpose/tile.cuh"

namespace klab::transpose {

namespace {

template <class T>
struct SwizzledLayout {  // tile[r][c ^ r], row pitch 32 elements
  static constexpr int kElems = kTile * kTile;
  __device__ static int at(int r, int c) { return r * kTile + (c ^ r); }
};

}  // namespace

void launch_swizzled(const Problem& p, Buffers& b, const LaunchArgs& args) {
  launch_tiled<SwizzledLayout>(p, b, args);
}

Variant gpu_v04_swizzled() {
  return gpu_variant("v04_swizzled", "32x32 tile with an XOR swizzle instead of padding",
                     launch_swizzled);
}

}  // namespace klab::transpose

// v02 shared-memory tile: a 32 x 32 tile is read along input rows into shared memory and
// written along output rows from it, so both global accesses are coalesced.
// Adds over v01: full-sector stores (a warp writes 128 bytes of one output row in f32, 64 in bf16).
// Expected bottleneck: shared-memory bank conflicts. The write phase reads a tile column:
// tile[tx][ty] with a row pitch of 32 words puts all 32 lanes in one bank (32-way in f32; 16-way
// in bf16, where two lanes share a word), so each warp's shared load replays 32 (16) times.
// Also only 4 loads (16 bytes in f32) in flight per thread between barriers.
// Predicted 55-70% of copy (f32), lower in bf16 (half the bytes per instruction).
// Requirements: none (partial tiles are masked; any alignment).
#include "kernels/transpose/tile.cuh"

namespace klab::transpose {

namespace {

template <class T>
struct PlainLayout {  // tile[r][c], row pitch 32 elements
  static constexpr int kElems = kTile * kTile;
  __device__ static int at(int r, int c) { return r * kTile + c; }
};

}  // namespace

Variant gpu_v02_smem_tile() {
  return gpu_variant("v02_smem_tile", "32x32 shared-memory tile: coalesced loads and stores",
                     [](const Problem& p, Buffers& b, const LaunchArgs& a) {
                       launch_tiled<PlainLayout>(p, b, a);
                     });
}

}  // namespace klab::transpose

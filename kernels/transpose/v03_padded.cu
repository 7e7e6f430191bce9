// v03 padded tile: v02 with one 32-bit word of padding per tile row (pitch 33 f32 / 34 bf16).
// Adds over v02: conflict-free shared memory. A row is then 33 (f32) or 17 (bf16) words, an odd
// number, so the 32 rows of a tile column start in 32 distinct banks. (One bf16 element of
// padding would not do: a 16.5-word pitch still pairs lanes r and r + 15 in one bank on odd
// columns, a 2-way conflict.)
// Expected bottleneck: memory parallelism. Each thread has only 4 scalar loads in flight between
// two barriers; 2-byte bf16 accesses move half the bytes per instruction. Predicted 75-85% of
// copy (f32), 60-70% (bf16).
// Requirements: none; 32 x (32 x sizeof(T) + 4) bytes of shared memory per block.
#include "kernels/transpose/tile.cuh"

namespace klab::transpose {

namespace {

template <class T>
struct PaddedLayout {  // tile[r][c], row pitch 32 elements + one 32-bit word
  static constexpr int kPitch = kTile + 4 / int(sizeof(T));
  static constexpr int kElems = kTile * kPitch;
  __device__ static int at(int r, int c) { return r * kPitch + c; }
};

}  // namespace

Variant gpu_v03_padded() {
  return gpu_variant("v03_padded", "32x32 tile padded by one word per row: no bank conflicts",
                     [](const Problem& p, Buffers& b, const LaunchArgs& a) {
                       launch_tiled<PaddedLayout>(p, b, a);
                     });
}

}  // namespace klab::transpose

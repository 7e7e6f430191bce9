// v02 misaligned vector. PLANTED FAULT: a misaligned 16-byte load. Each block stages a tile of
// 4 * kBlock elements with 16-byte vector loads, and the load of the tile *with its left halo*
// starts one element before the tile: x + base - 1 is 4 bytes past a 16-byte boundary, so the
// float4 load is misaligned. (Right: load the tile at x + base as float4, the halo as scalars.)
// How it shows: the launch fails with "misaligned address" (the check reports an error);
// compute-sanitizer --tool memcheck reports "Invalid __global__ read of size 16 bytes ... is
// misaligned" at the vector load's line.
#include "kernels/sabotage/rung.cuh"

namespace klab::sabotage {

inline constexpr int kVecTile = 4 * kBlock;  // elements per block

__global__ void sabotage_v02_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  // s_tile[j] holds x[base - 1 + j]: the left halo, the 4 * kBlock tile, the right halo.
  __shared__ float s_tile[kVecTile + 2];
  const int t = threadIdx.x;
  const int64_t base = int64_t(blockIdx.x) * kVecTile;
  const int64_t first = base - 1 + 4 * t;  // the x index of this thread's four slots
  if (first >= 0 && first + 4 <= n) {
    const float4 v = *reinterpret_cast<const float4*>(x + first);  // misaligned: first % 4 == 3
    s_tile[4 * t] = v.x;
    s_tile[4 * t + 1] = v.y;
    s_tile[4 * t + 2] = v.z;
    s_tile[4 * t + 3] = v.w;
  } else {
    for (int k = 0; k < 4; ++k) {
      const int64_t j = first + k;
      s_tile[4 * t + k] = j >= 0 && j < n ? x[j] : 0.f;
    }
  }
  if (t == kBlock - 1)
    for (int k = 0; k < 2; ++k) {
      const int64_t j = base - 1 + kVecTile + k;
      s_tile[kVecTile + k] = j < n ? x[j] : 0.f;
    }
  __syncthreads();
  for (int k = 0; k < 4; ++k) {
    const int m = 4 * t + k;  // output base + m reads s_tile[m .. m + 2]
    if (base + m < n) y[base + m] = stencil(s_tile[m], s_tile[m + 1], s_tile[m + 2]);
  }
}

Variant gpu_v02_misaligned_vector() {
  return gpu_variant(
      "v02_misaligned_vector",
      "SABOTAGED: misaligned 16-byte vector load (the tile with its left halo)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        sabotage_v02_kernel<<<device::grid_1d(n, kVecTile), kBlock, 0, stream_of(args)>>>(
            b.ptr<const float>("x"), b.ptr<float>("y"), n);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::sabotage

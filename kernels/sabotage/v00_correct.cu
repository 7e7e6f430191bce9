// v00 correct: no planted fault; the rung the exhibits are compared with.
// Each block stages its kBlock elements and one halo element on each side in shared memory, waits
// for the whole tile (__syncthreads), then each thread reads its two neighbours from the tile.
// Requirements: none (n >= 1).
#include "kernels/sabotage/rung.cuh"

namespace klab::sabotage {

__global__ void sabotage_v00_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float s_tile[kBlock + 2];  // s_tile[0]: left halo, [1..kBlock]: tile, then right halo
  const int t = threadIdx.x;
  const int64_t base = int64_t(blockIdx.x) * kBlock, i = base + t;
  s_tile[t + 1] = i < n ? x[i] : 0.f;
  if (t == 0) s_tile[0] = base > 0 ? x[base - 1] : 0.f;
  if (t == kBlock - 1) s_tile[kBlock + 1] = base + kBlock < n ? x[base + kBlock] : 0.f;
  __syncthreads();  // every write to s_tile before any neighbour reads it
  if (i < n) y[i] = stencil(s_tile[t], s_tile[t + 1], s_tile[t + 2]);
}

Variant gpu_v00_correct() {
  return gpu_variant(
      "v00_correct", "correct: shared-memory tile with halo, synchronised",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        sabotage_v00_kernel<<<device::grid_1d(n, kBlock), kBlock, 0, stream_of(args)>>>(
            b.ptr<const float>("x"), b.ptr<float>("y"), n);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::sabotage

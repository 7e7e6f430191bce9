// v01 smem race. PLANTED FAULT: a shared-memory race. v00 without its __syncthreads(): a thread
// reads its right neighbour's tile slot, which another warp writes (lanes 31 of each warp read
// slots the next warp writes), with nothing ordering the write before the read.
// How it shows: compute-sanitizer --tool racecheck reports a hazard between the tile write and
// the stencil read; the check fails when a warp runs ahead of its neighbour (not on every run).
#include "kernels/sabotage/rung.cuh"

namespace klab::sabotage {

__global__ void sabotage_v01_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float s_tile[kBlock + 2];  // s_tile[0]: left halo, [1..kBlock]: tile, then right halo
  const int t = threadIdx.x;
  const int64_t base = int64_t(blockIdx.x) * kBlock, i = base + t;
  s_tile[t + 1] = i < n ? x[i] : 0.f;
  if (t == 0) s_tile[0] = base > 0 ? x[base - 1] : 0.f;
  if (t == kBlock - 1) s_tile[kBlock + 1] = base + kBlock < n ? x[base + kBlock] : 0.f;
  // (the __syncthreads() belongs here)
  if (i < n) y[i] = stencil(s_tile[t], s_tile[t + 1], s_tile[t + 2]);
}

Variant gpu_v01_smem_race() {
  return gpu_variant(
      "v01_smem_race", "SABOTAGED: shared-memory race (no __syncthreads)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        sabotage_v01_kernel<<<device::grid_1d(n, kBlock), kBlock, 0, stream_of(args)>>>(
            b.ptr<const float>("x"), b.ptr<float>("y"), n);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::sabotage

// v03 silent NaN. PLANTED FAULT: the right halo is read from the wrong buffer: y (the output)
// instead of x, a one-letter slip. The read is in bounds and of initialised memory, so no
// sanitizer sees it; the harness poisons y with NaN before each checked run, and the block to
// the right has (almost always) not written that element yet, so the last output of every block
// is NaN (in production it would be a stale, plausible-looking value).
// How it shows: the check reports NaN outputs at indices kBlock - 1, 2 kBlock - 1, ...
#include "kernels/sabotage/rung.cuh"

namespace klab::sabotage {

__global__ void sabotage_v03_kernel(const float* __restrict__ x, float* y, int64_t n) {
  __shared__ float s_tile[kBlock + 2];  // s_tile[0]: left halo, [1..kBlock]: tile, then right halo
  const int t = threadIdx.x;
  const int64_t base = int64_t(blockIdx.x) * kBlock, i = base + t;
  s_tile[t + 1] = i < n ? x[i] : 0.f;
  if (t == 0) s_tile[0] = base > 0 ? x[base - 1] : 0.f;
  if (t == kBlock - 1) s_tile[kBlock + 1] = base + kBlock < n ? y[base + kBlock] : 0.f;  // y: x
  __syncthreads();
  if (i < n) y[i] = stencil(s_tile[t], s_tile[t + 1], s_tile[t + 2]);
}

Variant gpu_v03_silent_nan() {
  return gpu_variant(
      "v03_silent_nan", "SABOTAGED: right halo read from the output buffer (NaN)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        sabotage_v03_kernel<<<device::grid_1d(n, kBlock), kBlock, 0, stream_of(args)>>>(
            b.ptr<const float>("x"), b.ptr<float>("y"), n);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::sabotage

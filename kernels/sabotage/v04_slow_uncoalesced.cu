// v04 slow uncoalesced. PLANTED FAULT: correct but slow on purpose. Each block covers kBlock
// consecutive elements, but thread t takes element (t % 32) * 8 + t / 32 of them: the 32 lanes
// of a warp touch elements 8 floats (32 bytes, one sector) apart, so every warp-wide load or
// store touches 32 sectors instead of 4. (Right: thread t takes element t.)
// How it shows: Nsight Compute's l1tex sectors per global load and store request are 32 instead
// of 4 (`klab profile --set memory`, `klab doctor`).
#include "kernels/sabotage/rung.cuh"

namespace klab::sabotage {

__global__ void sabotage_v04_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  static_assert(kBlock % 32 == 0 && kBlock / 32 == 8, "the stride below assumes 8 warps");
  const int t = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * kBlock + (t % 32) * 8 + t / 32;  // lanes 32 B apart
  if (i >= n) return;
  const float left = i > 0 ? x[i - 1] : 0.f, right = i + 1 < n ? x[i + 1] : 0.f;
  y[i] = stencil(left, x[i], right);
}

Variant gpu_v04_slow_uncoalesced() {
  return gpu_variant(
      "v04_slow_uncoalesced", "SABOTAGED: correct but uncoalesced (lanes 32 bytes apart)",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        sabotage_v04_kernel<<<device::grid_1d(n, kBlock), kBlock, 0, stream_of(args)>>>(
            b.ptr<const float>("x"), b.ptr<float>("y"), n);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::sabotage

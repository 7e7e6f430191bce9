// v02 grid-stride: one full wave of blocks (SMs x blocks-per-SM) loops over the array.
// Adds over v01: no block churn, and the grid size no longer depends on n (no 2^31 limit).
// Expected bottleneck: DRAM bandwidth with still only one 4-byte load per input in flight per
// iteration; the loop's index math is hidden behind memory latency.
// Requirements: none.
#include "kernels/elementwise/rung.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::elementwise {

namespace {

template <class Op, class T, int kIn>
__global__ void grid_stride_map(Op op, MapArgs<T, kIn> a) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += stride)
    a.out[i] = apply_at(op, a, i);
}

__global__ void grid_stride_gray(const float* __restrict__ rgb, float* __restrict__ out,
                                 int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

}  // namespace

void launch_grid_stride(Op op, const Problem& p, Buffers& b, const LaunchArgs& args) {
  const int block = device::block_or(args.block_threads, kDefaultBlock);
  const int64_t n = p.dim("n");
  const unsigned grid =
      device::grid_full_wave(n, block, device_info().sm_count, device_info().max_threads_per_sm);
  if (op == Op::grayscale) {
    grid_stride_gray<<<grid, block, 0, stream_of(args)>>>(b.ptr<float>("rgb"), b.ptr<float>("gray"),
                                                          n);
  } else {
    with_map_args(op, p, b, [&](auto f, auto a) {
      grid_stride_map<<<grid, block, 0, stream_of(args)>>>(f, a);
    });
  }
  KLAB_CHECK_LAUNCH();
}

Variant gpu_v02_grid_stride(Op op) {
  return gpu_variant(op, "v02_grid_stride", "grid-stride loop over one full wave of blocks",
                     [op](const Problem& p, Buffers& b, const LaunchArgs& args) {
                       launch_grid_stride(op, p, b, args);
                     });
}

}  // namespace klab::elementwise

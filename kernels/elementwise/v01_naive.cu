// v01 naive: one thread per element, ceil(n / block) blocks.
// Adds: nothing — the first correct kernel. Coalesced by construction (thread i touches element i).
// Expected bottleneck: DRAM bandwidth, but each thread issues one 4-byte load per input and
// retires, so few bytes are in flight per SM; the block scheduler's churn also costs a little.
// Requirements: none (any n, any alignment).
#include "kernels/elementwise/rung.cuh"

namespace klab::elementwise {

namespace {

template <class Op, class T, int kIn>
__global__ void naive_map(Op op, MapArgs<T, kIn> a) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < a.n) a.out[i] = apply_at(op, a, i);
}

__global__ void naive_gray(const float* __restrict__ rgb, float* __restrict__ out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

}  // namespace

Variant gpu_v01_naive(Op op) {
  return gpu_variant(op, "v01_naive", "one thread per element",
                     [op](const Problem& p, Buffers& b, const LaunchArgs& args) {
                       const int block = device::block_or(args.block_threads, kDefaultBlock);
                       const int64_t n = p.dim("n");
                       if (op == Op::grayscale) {
                         naive_gray<<<device::grid_1d(n, block), block, 0, stream_of(args)>>>(
                             b.ptr<float>("rgb"), b.ptr<float>("gray"), n);
                       } else {
                         with_map_args(op, p, b, [&](auto f, auto a) {
                           naive_map<<<device::grid_1d(n, block), block, 0, stream_of(args)>>>(f,
                                                                                               a);
                         });
                       }
                       KLAB_CHECK_LAUNCH();
                     });
}

}  // namespace klab::elementwise

// v02 warp shuffle: a grid-stride loop (one full wave of blocks, each thread sums many values
// in a register), then a block reduction by warp shuffles (5 levels in registers, one barrier
// to combine the warps), then one atomicAdd per block into the output, which the launch zeroes
// first with a memset on the same stream.
// Adds over v01: values per thread (the sum of n / (grid x block) loads before any reduction),
// shuffles instead of 8 shared-memory levels and barriers, and a single pass: ~1000 atomics in
// all instead of 3 extra passes.
// Expected bottleneck: bytes in flight. Each load is a scalar 4-byte (2-byte bf16) access, and the
// compiler keeps only a few in flight per thread behind the dependent accumulation. Predicted
// 70-80% of read (f32), 45-60% (bf16). The result order varies from run to run (atomics).
// Requirements: none.
#include "kernels/reduction/reduce_sum/rung.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kDefaultBlock = 256;

template <class T>
__global__ void shuffle_sum(const T* __restrict__ x, int64_t n, float* __restrict__ out) {
  __shared__ float smem[32];
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  float acc = 0.f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    acc += device::to_float(x[i]);
  acc = block_all_reduce(acc, SumOp{}, smem);
  if (threadIdx.x == 0) atomicAdd(out, acc);
}

}  // namespace

Variant sum_v02_warp_shuffle() {
  Variant v = sum_variant(
      "v02_warp_shuffle", "grid-stride loop, warp-shuffle block reduction, one atomic per block",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = warp_multiple(device::block_or(args.block_threads, kDefaultBlock));
        const int64_t n = p.dim("n");
        float* out = b.ptr<float>("sum");
        KLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream_of(args)));
        with_sum_input(p, b, [&](auto x) {
          shuffle_sum<<<device::grid_full_wave(n, block, device_info().sm_count,
                                               device_info().max_threads_per_sm),
                        block, 0, stream_of(args)>>>(x, n, out);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::reduction

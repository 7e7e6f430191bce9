// v03 vectorized: v02 with 16-byte loads (4 f32 / 8 bf16 per LDG.128), four of them issued
// before any is used, each summed as a small pairwise tree into its own accumulator.
// Adds over v02: 64 bytes in flight per thread (16x v02's f32, 32x its bf16) and 4x / 8x fewer
// load instructions: one full wave of 2048 threads per SM keeps ~128 KiB of loads in flight,
// more than Little's law asks of HBM3e (about 4.3 TB/s x ~1 us / 132 SMs ~ 33 KiB per SM).
// Misaligned bases (misalign=1) are handled, not refused: the first (16 - addr % 16) / sizeof(T)
// values are a scalar head, the vector body starts aligned, the last n % kN values are a tail.
// Expected bottleneck: DRAM read bandwidth. Predicted 90-95% of read (both dtypes); the memset
// and ~1000 atomics cost about 1% at the headline size.
// Requirements: none.
#include <cstdint>

#include "kernels/reduction/reduce_sum/rung.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kDefaultBlock = 256;
constexpr int kUnroll = 4;

/// Pairwise sum of one 16-byte vector's lanes in fp32 (depth log2(kN)).
template <class T>
__device__ __forceinline__ float vec_sum(const device::Vec16<T>& v) {
  constexpr int kN = device::Vec16<T>::kN;
  float f[kN];
#pragma unroll
  for (int e = 0; e < kN; ++e) f[e] = device::to_float(v.v[e]);
#pragma unroll
  for (int w = 1; w < kN; w *= 2)
#pragma unroll
    for (int e = 0; e < kN; e += 2 * w) f[e] += f[e + w];
  return f[0];
}

/// x[0, head) scalar; x[head, head + n_vec kN) as 16-byte vectors; the rest scalar.
// grid_full_wave sizes the grid for full occupancy (2048 threads per SM): the kernel must fit in
// 32 registers or a second, partial wave of blocks would run after the first (38 unbounded).
// (1024, 2) allows every swept block size and caps registers at 65536 / 2048 = 32.
template <class T>
__global__ void __launch_bounds__(1024, 2)
    vectorized_sum(const T* __restrict__ x, int64_t n, int64_t head, float* __restrict__ out) {
  using V = device::Vec16<T>;
  constexpr int kN = V::kN;
  __shared__ float smem[32];
  const T* xv = x + head;  // 16-byte aligned
  const int64_t n_vec = (n - head) / kN;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc[kUnroll] = {};
  int64_t j = tid;
  for (; j + (kUnroll - 1) * stride < n_vec; j += kUnroll * stride) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = device::load16_stream(xv + (j + u * stride) * kN);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += vec_sum(v[u]);
  }
  for (; j < n_vec; j += stride) acc[0] += vec_sum(device::load16_stream(xv + j * kN));
  const int64_t tail = head + n_vec * kN;  // fewer than kN values left after the vectors
  if (tid < head) acc[1] += device::to_float(x[tid]);
  if (tid < n - tail) acc[2] += device::to_float(x[tail + tid]);
  float total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  total = block_all_reduce(total, SumOp{}, smem);
  if (threadIdx.x == 0) atomicAdd(out, total);
}

}  // namespace

Variant sum_v03_vectorized() {
  Variant v = sum_variant(
      "v03_vectorized", "16-byte loads, 4 in flight per thread, shuffle + one atomic per block",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = warp_multiple(device::block_or(args.block_threads, kDefaultBlock));
        const int64_t n = p.dim("n");
        float* out = b.ptr<float>("sum");
        KLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream_of(args)));
        with_sum_input(p, b, [&]<class T>(const T* x) {
          constexpr int kN = device::Vec16<T>::kN;
          const auto addr = reinterpret_cast<uintptr_t>(x);
          const int64_t head =
              std::min<int64_t>(n, static_cast<int64_t>((16 - addr % 16) % 16 / sizeof(T)));
          const int64_t n_vec = (n - head) / kN;
          // Enough threads for the vector loop, and at least kN for the scalar head and tail.
          const unsigned grid =
              device::grid_full_wave(std::max<int64_t>(device::ceil_div(n_vec, kUnroll), kN), block,
                                     device_info().sm_count, device_info().max_threads_per_sm);
          vectorized_sum<<<grid, block, 0, stream_of(args)>>>(x, n, head, out);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.info.sweepable = true;
  return v;
}

}  // namespace klab::reduction

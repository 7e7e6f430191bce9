#pragma once
// The 16-byte vectorised kernels behind v03 (kUnroll = 1) and v04 (kUnroll = 4).
#include "kernels/elementwise/rung.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::elementwise {

/// Each block owns chunks of blockDim.x * kUnroll consecutive 16-byte vectors; a thread issues
/// all kUnroll loads of a chunk (each coalesced across the warp) before the first use, so
/// kUnroll x 16 bytes per input are in flight per thread, and a block streams one contiguous
/// region (DRAM-page friendly) rather than kUnroll regions a grid apart.
template <int kUnroll, class Op, class T, int kIn>
__global__ void vectorized_map(Op op, MapArgs<T, kIn> a) {
  using V = device::Vec16<T>;
  constexpr int kN = V::kN;
  const int64_t n_vec = a.n / kN;
  const int64_t chunk = int64_t(blockDim.x) * kUnroll;
  auto compute = [&](const V(&in)[kIn]) { return apply_vec16(op, in); };
  for (int64_t base = blockIdx.x * chunk; base < n_vec; base += int64_t(gridDim.x) * chunk) {
    if (base + chunk <= n_vec) {
      V in[kUnroll][kIn];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kIn; ++k)
          in[u][k] = device::load16_stream(a.in[k] + (base + u * blockDim.x + threadIdx.x) * kN);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        device::store16(a.out + (base + u * blockDim.x + threadIdx.x) * kN, compute(in[u]));
    } else {  // the last, partial chunk
      for (int64_t j = base + threadIdx.x; j < n_vec; j += blockDim.x) {
        V in[kIn];
#pragma unroll
        for (int k = 0; k < kIn; ++k) in[k] = device::load16_stream(a.in[k] + j * kN);
        device::store16(a.out + j * kN, compute(in));
      }
    }
  }
  const int64_t tail =
      n_vec * kN + int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // last n % kN elements
  if (tail < a.n) a.out[tail] = apply_at(op, a, tail);
}

/// Four pixels per step: three 16-byte loads of interleaved RGB, one 16-byte store; chunks of
/// blockDim.x * kUnroll quads per block, as in vectorized_map.
template <int kUnroll>
__global__ void vectorized_gray(const float* __restrict__ rgb, float* __restrict__ out, int64_t n) {
  const int64_t n_quads = n / 4;
  const int64_t chunk = int64_t(blockDim.x) * kUnroll;
  auto quad = [&](const float4(&in)[3]) {
    const float* f = reinterpret_cast<const float*>(in);
    return make_float4(gray(f[0], f[1], f[2]), gray(f[3], f[4], f[5]), gray(f[6], f[7], f[8]),
                       gray(f[9], f[10], f[11]));
  };
  for (int64_t base = blockIdx.x * chunk; base < n_quads; base += int64_t(gridDim.x) * chunk) {
    if (base + chunk <= n_quads) {
      float4 in[kUnroll][3];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int c = 0; c < 3; ++c)
          in[u][c] = __ldcs(
              reinterpret_cast<const float4*>(rgb + 12 * (base + u * blockDim.x + threadIdx.x)) +
              c);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        *reinterpret_cast<float4*>(out + 4 * (base + u * blockDim.x + threadIdx.x)) = quad(in[u]);
    } else {
      for (int64_t j = base + threadIdx.x; j < n_quads; j += blockDim.x) {
        float4 in[3];
#pragma unroll
        for (int c = 0; c < 3; ++c)
          in[c] = __ldcs(reinterpret_cast<const float4*>(rgb + 12 * j) + c);
        *reinterpret_cast<float4*>(out + 4 * j) = quad(in);
      }
    }
  }
  const int64_t tail = n_quads * 4 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) out[tail] = gray(rgb[3 * tail], rgb[3 * tail + 1], rgb[3 * tail + 2]);
}

/// Vectorised launch when every pointer is 16-byte aligned; otherwise the grid-stride path.
template <int kUnroll>
void launch_vectorized(Op op, const Problem& p, Buffers& b, const LaunchArgs& args) {
  for (const auto& t : b.tensors)
    if (!device::aligned16(t.data)) return launch_grid_stride(op, p, b, args);
  const int block = device::block_or(args.block_threads, kDefaultBlock);
  const int64_t n = p.dim("n");
  if (op == Op::grayscale) {
    constexpr auto kernel = vectorized_gray<kUnroll>;
    const unsigned grid = device::grid_resident_wave(device_info().sm_count, kernel,
                                                     device::ceil_div(n, 4 * kUnroll), block);
    kernel<<<grid, block, 0, stream_of(args)>>>(b.ptr<float>("rgb"), b.ptr<float>("gray"), n);
  } else {
    with_map_args(op, p, b, [&](auto f, auto a) {
      using T = std::remove_pointer_t<decltype(a.out)>;
      constexpr int kN = device::Vec16<T>::kN;
      const auto kernel = vectorized_map<kUnroll, decltype(f), T, decltype(a)::kInputs>;
      const unsigned grid = device::grid_resident_wave(
          device_info().sm_count, kernel,
          std::max<int64_t>(device::ceil_div(n, kN * kUnroll), n % kN), block);
      kernel<<<grid, block, 0, stream_of(args)>>>(f, a);
    });
  }
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::elementwise

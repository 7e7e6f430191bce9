// Bandwidth ceilings: device-to-device copy (read + write counted), read-only and write-only.
// Each is the best of a few launch configurations of a simple 16-byte grid-stride kernel (and,
// for copy, cudaMemcpyAsync), so the ceiling is what this device demonstrably sustains.
#include <algorithm>
#include <cub/device/device_transform.cuh>
#include <string>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"

namespace klab {

namespace {

constexpr int kUnroll = 4;

// Each block copies chunks of blockDim.x * kUnroll consecutive vectors (n a multiple of that).
__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
  const int64_t chunk = int64_t(blockDim.x) * kUnroll;
  for (int64_t base = blockIdx.x * chunk; base < n; base += int64_t(gridDim.x) * chunk) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + base + u * blockDim.x + threadIdx.x);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[base + u * blockDim.x + threadIdx.x] = v[u];
  }
}

__global__ void read_kernel(const float4* __restrict__ src, int64_t n, float* __restrict__ sink) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n; i += stride) acc += src[i].x + src[i].y + src[i].z + src[i].w;
  if (acc == 1234.5f) *sink = acc;  // keeps the loads alive; never true for the fill we use
}

__global__ void write_kernel(float4* __restrict__ dst, int64_t n, float value) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const float4 v = make_float4(value, value, value, value);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = v;
}

struct Identity {
  __device__ float operator()(float x) const { return x; }
};

constexpr size_t kBytes = size_t(1) << 30;  // 1 GiB per buffer: ~17x the H200's L2

struct Best {
  double gbps = 0;
  std::string how;
  void offer(double g, const std::string& h) {
    if (g > gbps) {
      gbps = g;
      how = h;
    }
  }
};

template <class Launch>
void try_configs(Best& best, const BenchConfig& cfg, double bytes_moved, const std::string& what,
                 Launch&& launch) {
  const int sms = device_info().sm_count;
  CudaStream stream;
  for (int threads : {256, 512, 1024})
    for (int per_sm : {1, 2, 4, 8}) {
      if (threads * per_sm > device_info().max_threads_per_sm) continue;
      const int blocks = sms * per_sm;
      Timing t = bench_gpu([&](int) { launch(blocks, threads, stream.get()); }, 1,
                           reinterpret_cast<Stream>(stream.get()), cfg);
      best.offer(bytes_moved / (t.stats.median * 1e-3) / 1e9,
                 what + " " + std::to_string(blocks) + "x" + std::to_string(threads) +
                     ", 1 GiB, median of " + std::to_string(t.stats.n));
    }
}

Ceiling copy_probe(const BenchConfig& cfg) {
  DeviceBuffer a(kBytes), b(kBytes);
  KLAB_CUDA_CHECK(cudaMemset(a.get(), 0x3c, kBytes));
  const int64_t n = kBytes / sizeof(float4);
  Best best;
  try_configs(best, cfg, 2.0 * kBytes, "copy kernel", [&](int blocks, int threads, cudaStream_t s) {
    copy_kernel<<<blocks, threads, 0, s>>>(static_cast<const float4*>(a.get()),
                                           static_cast<float4*>(b.get()), n);
    KLAB_CHECK_LAUNCH();
  });
  CudaStream stream;
  Timing t = bench_gpu(
      [&](int) {
        KLAB_CUDA_CHECK(
            cudaMemcpyAsync(b.get(), a.get(), kBytes, cudaMemcpyDeviceToDevice, stream.get()));
      },
      1, reinterpret_cast<Stream>(stream.get()), cfg);
  best.offer(2.0 * kBytes / (t.stats.median * 1e-3) / 1e9, "cudaMemcpyAsync D2D, 1 GiB");
  // CUB's transform (TMA bulk copies on sm_90) as an identity: the best copy a library does.
  t = bench_gpu(
      [&](int) {
        KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(
            static_cast<const float*>(a.get()), static_cast<float*>(b.get()),
            int64_t(kBytes / sizeof(float)), Identity{}, stream.get()));
      },
      1, reinterpret_cast<Stream>(stream.get()), cfg);
  best.offer(2.0 * kBytes / (t.stats.median * 1e-3) / 1e9, "cub::DeviceTransform identity, 1 GiB");
  return {"copy", "GB/s", best.gbps, datasheet_bandwidth_gbps(device_info().name),
          best.how + " (bytes read + bytes written)"};
}

Ceiling read_probe(const BenchConfig& cfg) {
  DeviceBuffer a(kBytes), sink(sizeof(float));
  KLAB_CUDA_CHECK(
      cudaMemset(a.get(), 0x3c, kBytes));  // 0x3c3c3c3c ~ 0.0115f: sums never hit 1234.5
  const int64_t n = kBytes / sizeof(float4);
  Best best;
  try_configs(best, cfg, 1.0 * kBytes, "read kernel", [&](int blocks, int threads, cudaStream_t s) {
    read_kernel<<<blocks, threads, 0, s>>>(static_cast<const float4*>(a.get()), n,
                                           static_cast<float*>(sink.get()));
    KLAB_CHECK_LAUNCH();
  });
  return {"read", "GB/s", best.gbps, datasheet_bandwidth_gbps(device_info().name), best.how};
}

Ceiling write_probe(const BenchConfig& cfg) {
  DeviceBuffer a(kBytes);
  const int64_t n = kBytes / sizeof(float4);
  Best best;
  try_configs(best, cfg, 1.0 * kBytes, "write kernel",
              [&](int blocks, int threads, cudaStream_t s) {
                write_kernel<<<blocks, threads, 0, s>>>(static_cast<float4*>(a.get()), n, 1.5f);
                KLAB_CHECK_LAUNCH();
              });
  return {"write", "GB/s", best.gbps, datasheet_bandwidth_gbps(device_info().name), best.how};
}

}  // namespace

void register_bandwidth_probes(std::vector<CeilingProbe>& probes) {
  probes.push_back(copy_probe);
  probes.push_back(read_probe);
  probes.push_back(write_probe);
}

}  // namespace klab

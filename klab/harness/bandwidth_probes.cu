// Bandwidth ceilings: device-to-device copy (read + write counted), the read-heavy mixes of 2, 3
// and 4 streams read per stream written, read-only and write-only.
// Each is the best of a few launch configurations of a simple 16-byte grid-stride kernel (and,
// for copy, cudaMemcpyAsync), so the ceiling is what this device demonstrably sustains.
#include <algorithm>
#include <cuda/std/tuple>
#include <functional>
#include <cub/device/device_transform.cuh>
#include <string>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"

namespace klab {

namespace {

constexpr int kUnroll = 4;

// out = in_0 + ... + in_{R-1}: R streams read, one written (R = 1: a copy). Each block handles
// chunks of blockDim.x * kUnroll consecutive vectors (n a multiple of that).
template <int R>
struct Inputs {
  const float4* p[R];
};

template <int R>
__global__ void mix_kernel(Inputs<R> in, float4* __restrict__ dst, int64_t n) {
  const int64_t chunk = int64_t(blockDim.x) * kUnroll;
  for (int64_t base = blockIdx.x * chunk; base < n; base += int64_t(gridDim.x) * chunk) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(in.p[0] + base + u * blockDim.x + threadIdx.x);
#pragma unroll
    for (int r = 1; r < R; ++r)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const float4 w = __ldcs(in.p[r] + base + u * blockDim.x + threadIdx.x);
        v[u].x += w.x;
        v[u].y += w.y;
        v[u].z += w.z;
        v[u].w += w.w;
      }
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

struct Sum {
  __device__ float operator()(float x) const { return x; }
  __device__ float operator()(float x, float y) const { return x + y; }
  __device__ float operator()(float x, float y, float z) const { return x + y + z; }
  __device__ float operator()(float x, float y, float z, float w) const { return x + y + z + w; }
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

// The best of the launch shapes (threads x blocks an SM) of `launch`, rated by ceiling_time_ms;
// `median`, when given, gets the best median's GB/s beside it.
template <class Launch>
void try_configs(Best& best, const BenchConfig& cfg, double bytes_moved, const std::string& what,
                 Launch&& launch, const std::string& size = "1 GiB", double* median = nullptr) {
  const int sms = device_info().sm_count;
  CudaStream stream;
  for (int threads : {256, 512, 1024})
    for (int per_sm : {1, 2, 4, 8}) {
      if (threads * per_sm > device_info().max_threads_per_sm) continue;
      const int blocks = sms * per_sm;
      Timing t = bench_gpu([&](int) { launch(blocks, threads, stream.get()); }, 1,
                           reinterpret_cast<Stream>(stream.get()), cfg);
      best.offer(bytes_moved / (ceiling_time_ms(t.stats) * 1e-3) / 1e9,
                 what + " " + std::to_string(blocks) + "x" + std::to_string(threads) + ", " + size +
                     ", " + ceiling_rating(t.stats));
      if (median) *median = std::max(*median, bytes_moved / (t.stats.median * 1e-3) / 1e9);
    }
}

// The best of klab's mix kernel over launch shapes, and of CUB's transform (TMA bulk copies on
// sm_90: the best streaming a library does) with R inputs; for a copy also cudaMemcpyAsync.
// Read-heavy mixes sustain more bytes per second than a copy on HBM, so each mix is its own
// ceiling: a family is measured against the mix of its own traffic.
template <int R>
Ceiling mix_probe(const BenchConfig& cfg, const std::string& name) {
  std::vector<DeviceBuffer> in;
  Inputs<R> ptrs{};
  for (int r = 0; r < R; ++r) {
    in.emplace_back(kBytes);
    KLAB_CUDA_CHECK(cudaMemset(in.back().get(), 0x3c, kBytes));
    ptrs.p[r] = static_cast<const float4*>(in.back().get());
  }
  DeviceBuffer out(kBytes);
  const int64_t n = kBytes / sizeof(float4);
  const double moved = double(R + 1) * kBytes;
  Best best;
  try_configs(best, cfg, moved, R == 1 ? "copy kernel" : "sum kernel",
              [&](int blocks, int threads, cudaStream_t s) {
                mix_kernel<R><<<blocks, threads, 0, s>>>(ptrs, static_cast<float4*>(out.get()), n);
                KLAB_CHECK_LAUNCH();
              });
  CudaStream stream;
  auto offer = [&](const std::function<void()>& launch, const std::string& how) {
    Timing t = bench_gpu([&](int) { launch(); }, 1, reinterpret_cast<Stream>(stream.get()), cfg);
    best.offer(moved / (ceiling_time_ms(t.stats) * 1e-3) / 1e9,
               how + ", " + ceiling_rating(t.stats));
  };
  const auto f = [&](int r) { return static_cast<const float*>(in[r].get()); };
  auto* o = static_cast<float*>(out.get());
  const int64_t nf = int64_t(kBytes / sizeof(float));
  if constexpr (R == 1) {
    offer(
        [&] {
          KLAB_CUDA_CHECK(cudaMemcpyAsync(o, f(0), kBytes, cudaMemcpyDeviceToDevice, stream.get()));
        },
        "cudaMemcpyAsync D2D, 1 GiB");
    offer(
        [&] { KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(f(0), o, nf, Sum{}, stream.get())); },
        "cub::DeviceTransform identity, 1 GiB");
  } else if constexpr (R == 2) {
    offer(
        [&] {
          KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(f(0), f(1)), o,
                                                          nf, Sum{}, stream.get()));
        },
        "cub::DeviceTransform a + b, 1 GiB each");
  } else if constexpr (R == 3) {
    offer(
        [&] {
          KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(f(0), f(1), f(2)),
                                                          o, nf, Sum{}, stream.get()));
        },
        "cub::DeviceTransform a + b + c, 1 GiB each");
  } else {
    offer(
        [&] {
          KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(
              ::cuda::std::make_tuple(f(0), f(1), f(2), f(3)), o, nf, Sum{}, stream.get()));
        },
        "cub::DeviceTransform a + b + c + d, 1 GiB each");
  }
  return {name, "GB/s", best.gbps, datasheet_bandwidth_gbps(device_info().name),
          best.how + " (bytes read + bytes written)"};
}

// The read kernel over `bytes` (a multiple of 16), its best launch shape; `median` as
// try_configs's.
Best read_at(const BenchConfig& cfg, size_t bytes, const std::string& size, double* median) {
  DeviceBuffer a(bytes), sink(sizeof(float));
  KLAB_CUDA_CHECK(cudaMemset(a.get(), 0x3c, bytes));  // 0x3c3c3c3c ~ 0.0115f: sums never hit 1234.5
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float4));
  Best best;
  try_configs(
      best, cfg, 1.0 * static_cast<double>(bytes), "read kernel",
      [&](int blocks, int threads, cudaStream_t s) {
        read_kernel<<<blocks, threads, 0, s>>>(static_cast<const float4*>(a.get()), n,
                                               static_cast<float*>(sink.get()));
        KLAB_CHECK_LAUNCH();
      },
      size, median);
  return best;
}

Ceiling read_probe(const BenchConfig& cfg) {
  const Best best = read_at(cfg, kBytes, "1 GiB", nullptr);
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

SizedRead measure_read_at(const BenchConfig& cfg, int64_t bytes) {
  KLAB_CHECK(bytes >= 16 && bytes % 16 == 0, "measure_read_at: a positive multiple of 16 bytes");
  SizedRead r;
  r.bytes = bytes;
  const Best best =
      read_at(cfg, static_cast<size_t>(bytes), std::to_string(bytes) + " bytes", &r.median_gbps);
  r.p10_gbps = best.gbps;
  r.how = best.how;
  return r;
}

void register_bandwidth_probes(std::vector<CeilingProbe>& probes) {
  probes.push_back([](const BenchConfig& c) { return mix_probe<1>(c, "copy"); });
  probes.push_back([](const BenchConfig& c) { return mix_probe<2>(c, "read2_write1"); });
  probes.push_back([](const BenchConfig& c) { return mix_probe<3>(c, "read3_write1"); });
  probes.push_back([](const BenchConfig& c) { return mix_probe<4>(c, "read4_write1"); });
  probes.push_back(read_probe);
  probes.push_back(write_probe);
}

}  // namespace klab

// Compute ceilings, each with its datasheet figure from the device table (devices.hpp):
//  - fp32: an FFMA microbenchmark. Every thread runs kChains independent FFMA chains in registers
//    (enough instruction-level parallelism to hide the FFMA latency with a few warps per
//    scheduler), every SM holds a full complement of threads, and the chains' sum is stored only
//    when it equals a sentinel it never reaches, so nothing is dead code. 2 flops per FFMA; only
//    the FFMAs of the timed loop are counted. Best of a few chain counts and block shapes.
//  - bf16_tc: cuBLASLt bf16 GEMM, 8192^3, 4096^3 and 4096x6144x4096, fp32 compute, bf16 out;
//    best of the heuristic's algos at each.
//  - fp8_tc: cuBLASLt e4m3 x e4m3 GEMM, the same shapes, per-tensor scales, TN (the layout FP8 requires),
//    bf16 out; best of the heuristic's algos, with and without fast accumulation.
// Inputs are random, never zeros: tensor-core power (and so clocks) depends on the data.
// A probe that cannot run here (no FP8 units) or fails reports 0 with the reason in `how`.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/devices.hpp"

namespace klab {

namespace {

// ---------------------------------------------------------------------------------------------
// FP32 FFMA peak

constexpr int kFfmaUnroll = 32;  // FFMAs per chain per loop trip: loop overhead stays ~1% of issue

template <int kChains>
__global__ void ffma_kernel(float* __restrict__ sink, int iters, float a, float b, float sentinel) {
  float x[kChains];  // (kChains) registers, one independent chain each
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = static_cast<float>(threadIdx.x + c) * 1e-3f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kFfmaUnroll; ++u) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], a, b);
    }
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += x[c];
  if (s == sentinel) *sink = s;  // never true (sentinel is negative, the chains stay positive)
}

const DeviceSpec* this_spec() { return device_for_cuda_name(device_info().name); }

struct Best {
  double value = 0;
  std::string how;
  bool throttled = false;  // the best measurement ran below the device's maximum SM clock
  void offer(double v, const std::string& h, bool below_max_clock = false) {
    if (v > value) {
      value = v;
      how = h;
      throttled = below_max_clock;
    }
  }
};

template <int kChains>
void try_ffma(Best& best, const BenchConfig& cfg, float* sink) {
  const DeviceInfo& d = device_info();
  CudaStream stream;
  for (int threads : {256, 512, 1024}) {
    if (threads > d.max_threads_per_sm) continue;
    int per_sm = 0;
    KLAB_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ffma_kernel<kChains>, threads, 0));
    if (per_sm <= 0) continue;
    const int blocks = d.sm_count * per_sm;
    // About 5 ms per launch at 128 FFMA lanes per SM and the maximum clock: long enough that
    // launch overhead and the tail are noise, short enough for many samples.
    const double clock_hz = (d.max_sm_clock_mhz > 0 ? d.max_sm_clock_mhz : 1500) * 1e6;
    const double est_flops = double(d.sm_count) * 128 * 2 * clock_hz * 5e-3;
    const double flops_per_trip = 2.0 * kChains * kFfmaUnroll * double(blocks) * threads;
    const int iters = std::max(1, static_cast<int>(est_flops / flops_per_trip));
    Timing t = bench_gpu(
        [&](int) {
          ffma_kernel<kChains>
              <<<blocks, threads, 0, stream.get()>>>(sink, iters, 0.9999f, 1e-4f, -1.f);
          KLAB_CHECK_LAUNCH();
        },
        1, reinterpret_cast<Stream>(stream.get()), cfg);
    const double flops = flops_per_trip * iters;
    best.offer(flops / (ceiling_time_ms(t.stats) * 1e-3) / 1e12,
               "FFMA kernel, " + std::to_string(kChains) + " chains/thread, " +
                   std::to_string(blocks) + "x" + std::to_string(threads) + " (" +
                   std::to_string(per_sm) + " blocks/SM), " + ceiling_rating(t.stats));
  }
}

Ceiling fp32_probe(const BenchConfig& cfg) {
  DeviceBuffer sink(sizeof(float));
  Best best;
  try_ffma<8>(best, cfg, static_cast<float*>(sink.get()));
  try_ffma<16>(best, cfg, static_cast<float*>(sink.get()));
  const DeviceSpec* spec = this_spec();
  return {"fp32", "TFLOP/s", best.value, spec ? spec->fp32 : 0.0, best.how + " (2 flops per FFMA)"};
}

// ---------------------------------------------------------------------------------------------
// Tensor-core peaks through cuBLASLt

__device__ inline float uniform_pm1(uint64_t i, uint32_t seed) {
  uint32_t x = static_cast<uint32_t>(i) ^ (static_cast<uint32_t>(i >> 32) * 0x9e3779b9u) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T>
__global__ void fill_kernel(T* __restrict__ p, int64_t n, uint32_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T(uniform_pm1(static_cast<uint64_t>(i), seed));
}

template <class T>
void fill_random(void* p, int64_t n, uint32_t seed) {
  fill_kernel<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  KLAB_CHECK_LAUNCH();
}

// RAII for the cuBLASLt objects a probe creates (probes may allocate; launchers may not).
struct LtDeleter {
  void operator()(cublasLtMatmulDesc_t p) const { cublasLtMatmulDescDestroy(p); }
  void operator()(cublasLtMatrixLayout_t p) const { cublasLtMatrixLayoutDestroy(p); }
  void operator()(cublasLtMatmulPreference_t p) const { cublasLtMatmulPreferenceDestroy(p); }
  void operator()(cublasLtHandle_t p) const { cublasLtDestroy(p); }
};
template <class T>
using LtPtr = std::unique_ptr<std::remove_pointer_t<T>, LtDeleter>;

LtPtr<cublasLtMatrixLayout_t> layout(cudaDataType_t t, int rows, int cols, int ld) {
  cublasLtMatrixLayout_t l = nullptr;
  KLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld));
  return LtPtr<cublasLtMatrixLayout_t>(l);
}

struct GemmProbe {
  const char* name;       // ceiling name
  const char* what;       // "bf16", "fp8 e4m3"
  cudaDataType_t ab, cd;  // input and output types
  int ab_bytes, cd_bytes;
  int min_sm;
  bool fp8;
};

// Several shapes, the highest counts: the largest draws the most power and can run at a lower
// SM clock than a smaller one that still fills the chip.
struct GemmShape {
  int m, n, k;
};
constexpr GemmShape kGemmShapes[] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 6144, 4096}};
constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // what cuBLAS recommends for Hopper
constexpr int kMaxAlgos = 4;   // the heuristic's first four per shape: bounds the probe's time
constexpr int kMaxPasses = 3;  // passes over the shapes while the best one ran throttled

Ceiling gemm_probe(const BenchConfig& cfg, const GemmProbe& g, double datasheet) {
  const DeviceInfo& d = device_info();
  if (d.sm() < g.min_sm)
    return {g.name, "TFLOP/s", 0, datasheet,
            std::string(g.what) + " tensor cores need sm_" + std::to_string(g.min_sm) +
                ", this is sm_" + std::to_string(d.sm())};
  Best best;
  int offered = 0;
  std::string first_failure;  // what went wrong, for the `how` of a probe that found nothing
  try {
    // A pass whose best measurement ran below the maximum SM clock (the GPU still ramping up, or
    // held down by power or heat) is repeated after a pause, keeping the highest of all passes:
    // a ceiling measured throttled would put the vendor's own later runs above 100%.
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (pass > 0) {
        if (!best.throttled) break;
        std::this_thread::sleep_for(std::chrono::seconds(2));
      }
      for (const GemmShape& shape : kGemmShapes) {
        const int m = shape.m, n = shape.n, k = shape.k;
        // Column-major, TN: op(A) = A^T with A stored k x m (ld k), B stored k x n (ld k), D m x n.
        DeviceBuffer a(size_t(k) * m * g.ab_bytes), b(size_t(k) * n * g.ab_bytes),
            c(size_t(m) * n * g.cd_bytes);
        // Each dequantisation scale in its own allocation (256-byte aligned): the first fp8 run found
        // every offered algorithm refusing to run with both scales in one 8-byte buffer, the second
        // one 4-byte aligned.
        DeviceBuffer ws(kWorkspaceBytes), scale_a(sizeof(float)), scale_b(sizeof(float));
        if (g.fp8) {
          fill_random<__nv_fp8_e4m3>(a.get(), int64_t(k) * m, 1);
          fill_random<__nv_fp8_e4m3>(b.get(), int64_t(k) * n, 2);
        } else {
          fill_random<__nv_bfloat16>(a.get(), int64_t(k) * m, 1);
          fill_random<__nv_bfloat16>(b.get(), int64_t(k) * n, 2);
        }
        const float one = 1.f;  // per-tensor dequantisation scales of A and B
        KLAB_CUDA_CHECK(cudaMemcpy(scale_a.get(), &one, sizeof one, cudaMemcpyHostToDevice));
        KLAB_CUDA_CHECK(cudaMemcpy(scale_b.get(), &one, sizeof one, cudaMemcpyHostToDevice));
        KLAB_CUDA_CHECK(cudaDeviceSynchronize());

        cublasLtHandle_t raw = nullptr;
        KLAB_CUBLAS_CHECK(cublasLtCreate(&raw));
        LtPtr<cublasLtHandle_t> handle(raw);
        auto la = layout(g.ab, k, m, k), lb = layout(g.ab, k, n, k), lc = layout(g.cd, m, n, m);
        CudaStream stream;
        const float alpha = 1.f, beta = 0.f;
        const double flops = 2.0 * m * n * k;
        for (int fast_accum : g.fp8 ? std::vector<int>{0, 1} : std::vector<int>{-1}) {
          cublasLtMatmulDesc_t op_raw = nullptr;
          KLAB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_raw, CUBLAS_COMPUTE_32F, CUDA_R_32F));
          LtPtr<cublasLtMatmulDesc_t> op(op_raw);
          const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
          KLAB_CUBLAS_CHECK(
              cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
          KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSB,
                                                           &nt, sizeof nt));
          if (g.fp8) {
            const float* sa = static_cast<const float*>(scale_a.get());
            const float* sb = static_cast<const float*>(scale_b.get());
            KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                op.get(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
            KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                op.get(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
            const int8_t fa = static_cast<int8_t>(fast_accum);
            KLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                op.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof fa));
          }
          cublasLtMatmulPreference_t pref_raw = nullptr;
          KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_raw));
          LtPtr<cublasLtMatmulPreference_t> pref(pref_raw);
          const uint64_t ws_bytes = kWorkspaceBytes;
          KLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
              pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
          cublasLtMatmulHeuristicResult_t results[kMaxAlgos] = {};
          int found = 0;
          const cublasStatus_t heuristic =
              cublasLtMatmulAlgoGetHeuristic(handle.get(), op.get(), la.get(), lb.get(), lc.get(),
                                             lc.get(), pref.get(), kMaxAlgos, results, &found);
          if (heuristic != CUBLAS_STATUS_SUCCESS) {
            if (first_failure.empty())
              first_failure = std::string("heuristic: ") + cublasGetStatusString(heuristic);
            continue;
          }
          offered += found;
          for (int i = 0; i < found; ++i) {
            if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
            const cublasLtMatmulAlgo_t* algo = &results[i].algo;
            auto run = [&](cudaStream_t s) {
              return cublasLtMatmul(handle.get(), op.get(), &alpha, a.get(), la.get(), b.get(),
                                    lb.get(), &beta, c.get(), lc.get(), c.get(), lc.get(), algo,
                                    ws.get(), kWorkspaceBytes, s);
            };
            if (const cublasStatus_t st = run(stream.get()); st != CUBLAS_STATUS_SUCCESS) {
              // An algo the heuristic offered but cannot run.
              if (first_failure.empty())
                first_failure = std::string("matmul: ") + cublasGetStatusString(st);
              continue;
            }
            KLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            Timing tm = bench_gpu([&](int) { KLAB_CUBLAS_CHECK(run(stream.get())); }, 1,
                                  reinterpret_cast<Stream>(stream.get()), cfg);
            best.offer(flops / (ceiling_time_ms(tm.stats) * 1e-3) / 1e12,
                       "cuBLASLt " + std::string(g.what) + " GEMM m=" + std::to_string(m) +
                           ",n=" + std::to_string(n) + ",k=" + std::to_string(k) +
                           " TN, fp32 compute, bf16 out" +
                           (g.fp8 ? std::string(", per-tensor scales, fast accumulation ") +
                                        (fast_accum ? "on" : "off")
                                  : std::string()) +
                           ", heuristic algo " + std::to_string(i + 1) + " of " +
                           std::to_string(found) + ", " + ceiling_rating(tm.stats) + ", SM clock " +
                           std::to_string(tm.sm_clock_min_mhz) + "-" +
                           std::to_string(tm.sm_clock_max_mhz) + " MHz" +
                           (tm.throttled_samples ? " (throttled)" : "") +
                           (pass > 0 ? ", pass " + std::to_string(pass + 1) : ""),
                       tm.throttled_samples > 0);
          }
        }
      }
    }
    if (best.value <= 0)
      return {
          g.name, "TFLOP/s", 0, datasheet,
          "cuBLASLt offered " + std::to_string(offered) + " algorithms, none ran" +
              (first_failure.empty() ? std::string() : " (first failure: " + first_failure + ")")};
    return {g.name, "TFLOP/s", best.value, datasheet, best.how};
  } catch (const Error& e) {
    std::fprintf(stderr, "klab: warning: the %s ceiling failed: %s\n", g.name, e.what());
    return {g.name, "TFLOP/s", 0, datasheet, std::string("failed: ") + e.what()};
  }
}

Ceiling bf16_tc_probe(const BenchConfig& cfg) {
  const DeviceSpec* spec = this_spec();
  return gemm_probe(cfg, {"bf16_tc", "bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2, 80, false},
                    spec ? spec->bf16 : 0.0);
}

Ceiling fp8_tc_probe(const BenchConfig& cfg) {
  const DeviceSpec* spec = this_spec();
  return gemm_probe(cfg, {"fp8_tc", "fp8 e4m3", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2, 89, true},
                    spec ? spec->fp8 : 0.0);
}

}  // namespace

void register_compute_probes(std::vector<CeilingProbe>& probes) {
  probes.push_back(fp32_probe);
  probes.push_back(bf16_tc_probe);
  probes.push_back(fp8_tc_probe);
}

}  // namespace klab

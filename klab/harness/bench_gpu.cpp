// GPU timing: CUDA events around each launch, L2 flushed before each sample in cold mode.
#include <chrono>
#include <climits>
#include <memory>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/harness/bench.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/l2_flush.hpp"

namespace klab {

namespace {

// Twice the L2, zero-filled once: reading it leaves none of the timed kernel's lines resident.
DeviceBuffer& flush_buffer() {
  static DeviceBuffer buf = [] {
    DeviceBuffer b(static_cast<size_t>(2 * device_info().l2_bytes));
    KLAB_CUDA_CHECK(cudaMemset(b.get(), 0, b.bytes()));
    return b;
  }();
  return buf;
}

}  // namespace

Timing bench_gpu(const std::function<void(int set)>& launch, int sets, Stream stream,
                 const BenchConfig& cfg) {
  using clock = std::chrono::steady_clock;
  Timing t;
  t.mode = cfg.hot ? "hot" : "cold";
  t.rotation_sets = cfg.hot ? 1 : sets;
  // Lines left persisting by an earlier access-policy window would survive the flush.
  KLAB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  DeviceBuffer* flush = cfg.hot ? nullptr : &flush_buffer();
  auto* s = reinterpret_cast<cudaStream_t>(stream);
  CudaEvent start, stop;

  // Warm-up: module load, first-touch and handle creation stay out of the numbers.
  const auto w0 = clock::now();
  for (int i = 0; i < 3 || std::chrono::duration<double>(clock::now() - w0).count() < cfg.warmup_s;
       ++i) {
    launch(i % t.rotation_sets);
    KLAB_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  int clk_min = INT_MAX, clk_max = 0;
  double measured = 0;
  const auto t0 = clock::now();
  for (int i = 0;; ++i) {
    if (flush) flush_l2(flush->get(), flush->bytes(), device_info().sm_count, s);
    KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
    launch(i % t.rotation_sets);
    KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
    // Read the clock while the sample runs (or just after, for short kernels).
    const ClockReading c = read_sm_clock();
    const float ms = elapsed_ms(start, stop);
    if (c.sm_mhz > 0) {
      clk_min = std::min(clk_min, c.sm_mhz);
      clk_max = std::max(clk_max, c.sm_mhz);
    }
    if (c.throttled) ++t.throttled_samples;
    t.samples_ms.push_back(ms);
    measured += ms / 1e3;
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (bench_should_stop(t.samples_ms, measured, wall, cfg, &t.converged)) break;
  }
  t.sm_clock_min_mhz = clk_max > 0 ? clk_min : 0;
  t.sm_clock_max_mhz = clk_max;
  t.stats = summarize(t.samples_ms);
  return t;
}

}  // namespace klab

// GPU timing: CUDA events around launches that the host has finished enqueuing before the start
// event runs. Cold: L2 flushed, then a blocking kernel holds the stream while the start event, one
// launch and the stop event are enqueued. Hot: a CUDA graph of many launches, replayed.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <string>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/bench.hpp"
#include "klab/harness/blocking_kernel.hpp"
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

// A hot sample replays a graph of this much launch time at least (so that the replay's own
// launch cost, a few microseconds, is a small part of it), of at most kMaxGraphLaunches.
constexpr double kHotSampleTargetMs = 0.2;
constexpr int kMaxGraphLaunches = 256;

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

// Captures `n` launches of set 0 into a graph; an empty string or why capture failed.
std::string capture(const std::function<void(int)>& launch, int n, cudaStream_t s, Graph& g) {
  KLAB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  std::string why;
  try {
    for (int i = 0; i < n; ++i) launch(0);
  } catch (const std::exception& e) {
    why = e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(s, &g.graph);
  if (why.empty() && end != cudaSuccess) why = cudaGetErrorString(end);
  if (why.empty() && cudaGraphInstantiate(&g.exec, g.graph, 0) != cudaSuccess)
    why = "graph instantiation failed";
  if (!why.empty()) cudaGetLastError();  // clear the error the failed capture left
  return why;
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
  StreamBlocker blocker;

  // Warm-up: module load, first-touch and handle creation stay out of the numbers. Its last
  // launches, timed, size the hot graph.
  const auto w0 = clock::now();
  float warm_ms = 0;
  for (int i = 0; i < 3 || std::chrono::duration<double>(clock::now() - w0).count() < cfg.warmup_s;
       ++i) {
    KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
    launch(i % t.rotation_sets);
    KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
    warm_ms = elapsed_ms(start, stop);
  }

  Graph graph;
  if (cfg.hot) {
    t.launches_per_sample =
        std::clamp(static_cast<int>(std::ceil(kHotSampleTargetMs / std::max(warm_ms, 1e-4f))), 1,
                   kMaxGraphLaunches);
    const std::string why = capture(launch, t.launches_per_sample, s, graph);
    if (why.empty()) {
      t.method = "events around a CUDA graph of " + std::to_string(t.launches_per_sample) +
                 " launches, replayed";
      KLAB_CUDA_CHECK(cudaGraphLaunch(graph.exec, s));  // the graph's own first-launch cost
      KLAB_CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
      t.launches_per_sample = 1;
      t.method =
          "events around 1 launch, stream held by a blocking kernel (graph capture failed: " + why +
          ")";
    }
  } else {
    t.method = "L2 flushed, events around 1 launch, stream held by a blocking kernel";
  }

  const int device_max_mhz = device_info().max_sm_clock_mhz;
  std::vector<double> all_ms, kept_ms;
  std::vector<int> clocks;
  int best_mhz = 0;
  double measured = 0;
  const auto t0 = clock::now();
  for (int i = 0;; ++i) {
    if (flush) flush_l2(flush->get(), flush->bytes(), device_info().sm_count, s);
    if (graph.exec) {
      KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
      KLAB_CUDA_CHECK(cudaGraphLaunch(graph.exec, s));
      KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
    } else {
      blocker.block(s);
      KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
      launch(i % t.rotation_sets);
      KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
      blocker.release();
    }
    // Read the clock while the sample runs (or just after, for short kernels).
    const ClockReading c = read_sm_clock();
    const float ms = elapsed_ms(start, stop) / static_cast<float>(t.launches_per_sample);
    if (blocker.timed_out())
      throw Error(
          "the launch waits on the host (it synchronises or allocates): it cannot be timed");
    all_ms.push_back(ms);
    clocks.push_back(c.sm_mhz);
    measured += ms * t.launches_per_sample / 1e3;
    // Stop on the samples that the clock filter would keep now (clock_keep_mask, kept up to date
    // as the samples come: refiltered only when a sample raises the best clock).
    auto kept_at = [&](int mhz) { return mhz == 0 || mhz >= best_mhz * (1 - kClockDropTolerance); };
    if (c.sm_mhz > best_mhz) {
      best_mhz = c.sm_mhz;
      kept_ms.clear();
      for (size_t k = 0; k < all_ms.size(); ++k)
        if (kept_at(clocks[k])) kept_ms.push_back(all_ms[k]);
    } else if (kept_at(c.sm_mhz)) {
      kept_ms.push_back(ms);
    }
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (bench_should_stop(kept_ms.size() >= 3 ? kept_ms : all_ms, measured, wall, cfg,
                          &t.converged))
      break;
  }
  const std::vector<bool> keep = clock_keep_mask(clocks);
  int clk_min = INT_MAX, clk_max = 0;
  for (size_t k = 0; k < clocks.size(); ++k) {
    if (!keep[k]) {
      ++t.discarded_samples;
      continue;
    }
    t.samples_ms.push_back(all_ms[k]);
    if (clocks[k] <= 0) continue;
    clk_min = std::min(clk_min, clocks[k]);
    clk_max = std::max(clk_max, clocks[k]);
    if (device_max_mhz > 0 && clocks[k] < device_max_mhz * (1 - kClockDropTolerance))
      ++t.throttled_samples;
  }
  t.sm_clock_min_mhz = clk_max > 0 ? clk_min : 0;
  t.sm_clock_max_mhz = clk_max;
  t.stats = summarize(t.samples_ms);
  return t;
}

}  // namespace klab

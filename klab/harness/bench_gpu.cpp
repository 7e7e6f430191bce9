// GPU timing: CUDA events around launches that the host has finished enqueuing before the start
// event runs. Cold: L2 flushed, then a blocking kernel holds the stream while the start event, one
// launch and the stop event are enqueued. Hot: a CUDA graph of many launches, replayed.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
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

// The samples kept as they come, for the stopping rule: those within kClockDropTolerance of the
// best clock read so far (clock_keep_mask's rule, refiltered only when a sample raises the best).
struct KeptSoFar {
  std::vector<double> all_ms, kept_ms;
  std::vector<int> clocks;
  int best_mhz = 0;
  double measured_s = 0;

  void add(double ms, int mhz, int launches) {
    all_ms.push_back(ms);
    clocks.push_back(mhz);
    measured_s += ms * launches / 1e3;
    auto kept_at = [&](int c) { return c == 0 || c >= best_mhz * (1 - kClockDropTolerance); };
    if (mhz > best_mhz) {
      best_mhz = mhz;
      kept_ms.clear();
      for (size_t k = 0; k < all_ms.size(); ++k)
        if (kept_at(clocks[k])) kept_ms.push_back(all_ms[k]);
    } else if (kept_at(mhz)) {
      kept_ms.push_back(ms);
    }
  }
  bool should_stop(double wall_s, const BenchConfig& cfg, bool* converged) const {
    return bench_should_stop(kept_ms.size() >= 3 ? kept_ms : all_ms, measured_s, wall_s, cfg,
                             converged);
  }
};

// The kept samples (clock_keep_mask), their clock range, throttled and dropped counts and
// statistics into t; returns the mask.
std::vector<bool> keep_by_clock(const KeptSoFar& k, Timing& t) {
  const int device_max_mhz = device_info().max_sm_clock_mhz;
  const std::vector<bool> keep = clock_keep_mask(k.clocks);
  int clk_min = INT_MAX, clk_max = 0;
  for (size_t i = 0; i < k.clocks.size(); ++i) {
    if (!keep[i]) {
      ++t.discarded_samples;
      continue;
    }
    t.samples_ms.push_back(k.all_ms[i]);
    if (k.clocks[i] <= 0) continue;
    clk_min = std::min(clk_min, k.clocks[i]);
    clk_max = std::max(clk_max, k.clocks[i]);
    if (device_max_mhz > 0 && k.clocks[i] < device_max_mhz * (1 - kClockDropTolerance))
      ++t.throttled_samples;
  }
  t.sm_clock_min_mhz = clk_max > 0 ? clk_min : 0;
  t.sm_clock_max_mhz = clk_max;
  t.stats = summarize(t.samples_ms);
  return keep;
}

// One sample of `launch()`: L2 flushed (unless `flush` is null: hot), the stream held by a
// blocking kernel while the start event, the launch and the stop event are enqueued; the SM
// clock read while it runs (or just after, for short kernels).
struct BlockedSample {
  float ms = 0;
  int sm_mhz = 0;
};
BlockedSample blocked_sample(const std::function<void()>& launch, DeviceBuffer* flush,
                             cudaStream_t s, CudaEvent& start, CudaEvent& stop,
                             StreamBlocker& blocker) {
  if (flush) flush_l2(flush->get(), flush->bytes(), device_info().sm_count, s);
  blocker.block(s);
  KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
  launch();
  KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
  blocker.release();
  const ClockReading c = read_sm_clock();
  BlockedSample out{elapsed_ms(start, stop), c.sm_mhz};
  if (blocker.timed_out())
    throw Error("the launch waits on the host (it synchronises or allocates): it cannot be timed");
  return out;
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

  KeptSoFar k;
  const auto t0 = clock::now();
  for (int i = 0;; ++i) {
    float ms = 0;
    int mhz = 0;
    if (graph.exec) {
      KLAB_CUDA_CHECK(cudaEventRecord(start.get(), s));
      KLAB_CUDA_CHECK(cudaGraphLaunch(graph.exec, s));
      KLAB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
      // Read the clock while the sample runs (or just after, for short kernels).
      mhz = read_sm_clock().sm_mhz;
      ms = elapsed_ms(start, stop) / static_cast<float>(t.launches_per_sample);
    } else {
      const BlockedSample c =
          blocked_sample([&] { launch(i % t.rotation_sets); }, flush, s, start, stop, blocker);
      ms = c.ms;
      mhz = c.sm_mhz;
    }
    k.add(ms, mhz, t.launches_per_sample);
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (k.should_stop(wall, cfg, &t.converged)) break;
  }
  keep_by_clock(k, t);
  return t;
}

std::vector<Timing> bench_gpu_interleaved(const std::vector<InterleavedLaunch>& launches,
                                          Stream stream, const BenchConfig& cfg,
                                          std::vector<std::vector<double>>& round_ms) {
  using clock = std::chrono::steady_clock;
  if (cfg.hot) throw UsageError("an interleaved benchmark is cold only (L2 flushed each sample)");
  const size_t n = launches.size();
  KLAB_CHECK(n > 0, "bench_gpu_interleaved: no launches");
  KLAB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  DeviceBuffer* flush = &flush_buffer();
  auto* s = reinterpret_cast<cudaStream_t>(stream);
  CudaEvent start, stop;
  StreamBlocker blocker;
  // Warm-up, each variant as bench_gpu warms one.
  for (const InterleavedLaunch& l : launches) {
    const auto w0 = clock::now();
    for (int i = 0;
         i < 3 || std::chrono::duration<double>(clock::now() - w0).count() < cfg.warmup_s; ++i)
      l.launch(i % l.sets, stream);
  }
  KLAB_CUDA_CHECK(cudaStreamSynchronize(s));

  BenchConfig all = cfg;
  all.max_time_s = cfg.max_time_s * static_cast<double>(n);
  std::vector<KeptSoFar> k(n);
  std::vector<Timing> t(n);
  const auto t0 = clock::now();
  // Each round's order is drawn at random (seeded: a rerun draws the same orders). An order
  // rotated by one each round ties each variant to one phase of the sample count, and the timing
  // path has a period of four samples: one sample in four takes ~0.85 us longer, the same clock
  // (2026-12-07_002836d_sample_phase, an H100), a phase of how the start event, the launch and the
  // stop event reach the GPU (gemm.md, "the two modes at M = 512"). Two copies of one kernel in
  // rotation read 0.97-1.03x of each other, a bias fixed for the process; drawn orders give every
  // variant the same share of the slow phase.
  std::mt19937 rng(0x6b6c6162u);
  std::unique_ptr<FILE, int (*)(FILE*)> samples(nullptr, std::fclose);
  if (!cfg.samples_path.empty()) {
    samples.reset(std::fopen(cfg.samples_path.c_str(), "a"));
    if (!samples) throw UsageError("cannot write the samples to " + cfg.samples_path);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t round = 0;; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t o = 0; o < n; ++o) {
      const size_t j = order[o];
      const InterleavedLaunch& l = launches[j];
      const int set = static_cast<int>(round % static_cast<size_t>(l.sets));
      const BlockedSample c =
          blocked_sample([&] { l.launch(set, stream); }, flush, s, start, stop, blocker);
      if (samples)
        std::fprintf(samples.get(), "%zu %zu %zu %d %.6f %d\n", round, o, j, set, c.ms, c.sm_mhz);
      k[j].add(c.ms, c.sm_mhz, 1);
    }
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    bool stop_all = true;
    for (size_t j = 0; j < n; ++j) stop_all &= k[j].should_stop(wall, all, &t[j].converged);
    if (stop_all) break;
  }
  round_ms.assign(n, {});
  for (size_t j = 0; j < n; ++j) {
    t[j].mode = "cold";
    t[j].rotation_sets = launches[j].sets;
    t[j].method =
        "L2 flushed, events around 1 launch, stream held by a blocking kernel; "
        "interleaved launch by launch with " +
        std::to_string(n - 1) + " other variant(s), the order drawn at random each round";
    const std::vector<bool> keep = keep_by_clock(k[j], t[j]);
    for (size_t i = 0; i < keep.size(); ++i)
      round_ms[j].push_back(keep[i] ? k[j].all_ms[i] : std::nan(""));
  }
  return t;
}

}  // namespace klab

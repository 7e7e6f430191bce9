#include <gtest/gtest.h>

#include "klab/harness/bench.hpp"
#include "klab/harness/stats.hpp"

using namespace klab;

TEST(Stats, PercentilesInterpolate) {
  const std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(percentile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 1.0), 5);
  EXPECT_DOUBLE_EQ(percentile(v, 0.1), 1.4);
}

TEST(Stats, SummaryAndRobustNoise) {
  std::vector<double> v(100, 2.0);
  SampleStats s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.rel_noise, 0.0);
  v[0] = 1000;  // one preempted sample barely moves the MAD-based noise
  s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.rel_noise, 0.0);
  EXPECT_GT(s.mean, 2.0);
  EXPECT_EQ(s.n, 100);
}

TEST(Bench, StopsOnNoiseOrLimits) {
  BenchConfig cfg;
  cfg.min_samples = 5;
  cfg.min_time_s = 0.0;
  cfg.target_rel_noise = 0.01;
  bool conv = false;
  std::vector<double> quiet(5, 1.0);
  EXPECT_TRUE(bench_should_stop(quiet, 1.0, 0.1, cfg, &conv));
  EXPECT_TRUE(conv);
  std::vector<double> noisy{1, 2, 1, 2, 1, 2};
  EXPECT_FALSE(bench_should_stop(noisy, 1.0, 0.1, cfg, &conv));
  EXPECT_TRUE(bench_should_stop(noisy, 1.0, cfg.max_time_s + 1, cfg, &conv));  // wall cap
  EXPECT_FALSE(conv);
  std::vector<double> two{1, 2};
  EXPECT_FALSE(bench_should_stop(two, 1.0, 1e9, cfg, &conv));  // never fewer than 3 samples
}

TEST(Bench, CpuBenchTimesSomething) {
  BenchConfig cfg;
  cfg.max_time_s = 0.2;
  volatile double sink = 0;
  const Timing t = bench_cpu(
      [&] {
        for (int i = 0; i < 10000; ++i) sink = sink + i;
      },
      cfg);
  EXPECT_GE(t.stats.n, 3);
  EXPECT_GT(t.stats.median, 0.0);
  EXPECT_EQ(t.mode, "cpu");
}

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/bench.hpp"
#include "klab/harness/result.hpp"
#include "klab/harness/runner.hpp"
#include "klab/harness/stats.hpp"

using namespace klab;

namespace {

// A timed cold record of `variant` at `shape` of family f in `dtype` with these samples (none:
// no statistics).
Result timed_record(const Family& f, const char* variant, const char* shape, const char* dtype,
                    std::vector<double> samples = {}, bool baseline = false) {
  Result r;
  r.variant = variant;
  r.problem = make_problem(f, shape, dtype);
  r.status = "ok";
  r.timed = true;
  r.timing.mode = "cold";
  r.timing.samples_ms = samples;
  if (!samples.empty()) r.timing.stats = summarize(samples);
  r.baseline_variant = baseline;
  return r;
}

}  // namespace

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

TEST(Rounds, MergePoolsSamplesAndKeepsTheFirstRoundsCheck) {
  const Family& f = registry().family("hgemm");
  auto round = [](std::vector<double> samples, int clock_lo, int clock_hi, int dropped) {
    Result r;
    r.status = "ok";
    r.timed = true;
    r.counts.flops = 2e12;
    r.counts.bytes = 1e9;
    r.timing.samples_ms = samples;
    r.timing.stats = summarize(samples);
    r.timing.method = "events around 1 launch";
    r.timing.sm_clock_min_mhz = clock_lo;
    r.timing.sm_clock_max_mhz = clock_hi;
    r.timing.discarded_samples = dropped;
    r.timing.converged = true;
    return r;
  };
  Result first = round({1.0, 1.0, 1.0}, 1980, 1980, 0);
  first.checked = true;
  first.check.passed = true;
  const Result second = round({3.0, 3.0, 3.0, 3.0}, 1950, 1980, 5);
  const Result m = merge_rounds(f, {first, second});
  EXPECT_EQ(m.timing.samples_ms.size(), 7u);
  EXPECT_DOUBLE_EQ(m.timing.stats.median, 3.0) << "the median of the pooled samples";
  EXPECT_EQ(m.timing.discarded_samples, 5);
  EXPECT_EQ(m.timing.sm_clock_min_mhz, 1950);
  EXPECT_EQ(m.timing.sm_clock_max_mhz, 1980);
  EXPECT_TRUE(m.checked && m.check.passed) << "the first round's check";
  EXPECT_NE(m.timing.method.find("pooled over 2 rounds"), std::string::npos) << m.timing.method;
  EXPECT_NEAR(m.tflops, 2e12 / 3e-3 / 1e12, 1e-9) << "throughput from the pooled median";
  // One round alone is returned as it is; a round that did not time fails the whole record.
  EXPECT_EQ(merge_rounds(f, {first}).timing.method, "events around 1 launch");
  Result failed = second;
  failed.status = "error";
  failed.timed = false;
  EXPECT_EQ(merge_rounds(f, {first, failed}).status, "error");
  EXPECT_THROW(merge_rounds(f, {}), Error);
}

TEST(SpeedupSummary, GeometricMeansPerVariantAndOfTheFastestPerProblem) {
  const Family& f = registry().family("hgemm");
  auto rec = [&](const char* variant, const char* shape, double speedup, bool baseline = false) {
    Result r = timed_record(f, variant, shape, "bf16", {}, baseline);
    r.baseline.speedup = speedup;
    return r;
  };
  // One problem with a speed-up: nothing to summarise.
  EXPECT_EQ(speedup_summary({rec("hgemm.a", "m=8,n=8,k=8", 2.0)}), "");
  const std::vector<Result> rs = {
      rec("hgemm.a", "m=8,n=8,k=8", 2.0),        rec("hgemm.a", "m=16,n=8,k=8", 0.5),
      rec("hgemm.b", "m=8,n=8,k=8", 1.0),        rec("hgemm.b", "m=16,n=8,k=8", 4.0),
      rec("hgemm.base", "m=8,n=8,k=8", 0, true),  // the baseline itself: left out
  };
  const std::string md = speedup_summary(rs);
  EXPECT_NE(md.find("| hgemm.a | 2 | 1.000x | 0.50x | 2.00x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| hgemm.b | 2 | 2.000x | 1.00x | 4.00x |"), std::string::npos) << md;
  // The fastest of each problem: 2.0 and 4.0, geometric mean sqrt(8).
  EXPECT_NE(md.find("| the fastest variant of each problem | 2 | 2.828x | 2.00x | 4.00x |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("hgemm.base"), std::string::npos);
}

// The fast state: a record's p10 against its baseline's p10 of the same problem and mode, beside
// the medians' speed-up; a record whose baseline is not among the results is left out.
TEST(FastStateSummary, TenthPercentilesAgainstTheBaselinesOfTheSameProblem) {
  const Family& f = registry().family("hgemm");
  auto rec = [&](const char* variant, const char* shape, std::vector<double> samples,
                 double median_speedup, bool baseline = false) {
    Result r = timed_record(f, variant, shape, "bf16", samples, baseline);
    if (!baseline) r.baseline = {"hgemm.base", median_speedup};
    return r;
  };
  // Ten samples each: p10 is the second smallest by klab's percentile (between the two fastest).
  std::vector<double> fast_slow(10, 2.0), base(10, 1.5);
  for (int i = 0; i < 3; ++i) fast_slow[i] = 1.0;  // three samples in the fast state
  for (int i = 0; i < 8; ++i) base[i] = 1.0;       // eight
  EXPECT_EQ(fast_state_summary({rec("hgemm.a", "m=8,n=8,k=8", fast_slow, 0.75)}), "");
  const std::vector<Result> rs = {
      rec("hgemm.a", "m=8,n=8,k=8", fast_slow, 0.5),
      rec("hgemm.base", "m=8,n=8,k=8", base, 0, true),
      rec("hgemm.a", "m=16,n=8,k=8", {2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 0.5),
      rec("hgemm.base", "m=16,n=8,k=8", {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, true),
      rec("hgemm.a", "m=32,n=8,k=8", {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1.0),  // no baseline record
  };
  const std::string md = fast_state_summary(rs);
  const SampleStats s = summarize(fast_slow), b = summarize(base);
  ASSERT_GT(s.p10, 0);
  char want[160];
  std::snprintf(want, sizeof want, "| hgemm.a | %s | 0.50x | %.2fx | %.3f | %.3f |",
                rs[0].problem.str().c_str(), b.p10 / s.p10, s.p90 / s.p10, b.p90 / b.p10);
  EXPECT_NE(md.find(want), std::string::npos) << md << "\nwant: " << want;
  EXPECT_NE(md.find("| 0.50x | 0.50x | 1.000 | 1.000 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("m=32"), std::string::npos) << md;
  std::snprintf(want, sizeof want, "| hgemm.a | geometric mean, 2 problems | | %.3fx | | |",
                std::sqrt(b.p10 / s.p10 * 0.5));
  EXPECT_NE(md.find(want), std::string::npos) << md << "\nwant: " << want;
}

// Paired rounds: the ratio of each round's two samples, over the rounds where both were kept.
// The clock stepping down half way (every sample doubled) moves both samples of a round alike:
// the paired ratio stays exact where the medians of the two kept sets, which lost different
// rounds, do not.
TEST(PairedRatio, RatiosOfTheRoundsBothKept) {
  const double nan = std::nan("");
  const std::vector<double> base{1.0, 1.0, 1.0, 2.0, 2.0, 2.0}, var{0.8, 0.8, nan, 1.6, nan, nan};
  const PairedRatio r = paired_ratio(base, var);
  EXPECT_EQ(r.pairs, 3);
  EXPECT_DOUBLE_EQ(r.median, 1.25);
  EXPECT_DOUBLE_EQ(r.p10, 1.25);
  EXPECT_DOUBLE_EQ(r.p90, 1.25);
  EXPECT_NE(summarize({1.0, 1.0, 1.0, 2.0, 2.0, 2.0}).median / summarize({0.8, 0.8, 1.6}).median,
            1.25);
  // Varying ratios: 2, 1, 0.5 (a dropped baseline round left out) -> median 1, p10 between the
  // two smallest by klab's percentile.
  const PairedRatio v = paired_ratio({2.0, 1.0, nan, 1.0}, {1.0, 1.0, 5.0, 2.0});
  EXPECT_EQ(v.pairs, 3);
  EXPECT_DOUBLE_EQ(v.median, 1.0);
  EXPECT_DOUBLE_EQ(v.p10, percentile({0.5, 1.0, 2.0}, 0.1));
  EXPECT_DOUBLE_EQ(v.p90, percentile({0.5, 1.0, 2.0}, 0.9));
  EXPECT_EQ(paired_ratio({nan, 1.0}, {1.0, nan}).pairs, 0);
  EXPECT_EQ(paired_ratio({}, {}).pairs, 0);
  EXPECT_EQ(v.ci_hi, 0.0);  // three pairs: no interval
}

// The paired median's 95% confidence interval: ratios 1 .. 100 (in any order) give the sorted
// ratios at 0-based ranks 49.5 -+ 1.96 sqrt(100) / 2 = 9.8, rounded outwards (39 and 60): the
// 40th and the 61st, symmetric about the median's two middle ones.
TEST(PairedRatio, MedianConfidenceIntervalByOrderStatistics) {
  std::vector<double> base, var;
  for (int i = 100; i >= 1; --i) {
    base.push_back(double(i));
    var.push_back(1.0);
  }
  const PairedRatio r = paired_ratio(base, var);
  EXPECT_EQ(r.pairs, 100);
  EXPECT_DOUBLE_EQ(r.ci_lo, 40.0);
  EXPECT_DOUBLE_EQ(r.ci_hi, 61.0);
  EXPECT_LE(r.ci_lo, r.median);
  EXPECT_GE(r.ci_hi, r.median);
  base.resize(kMinPairsForCi - 1);
  var.resize(kMinPairsForCi - 1);
  EXPECT_EQ(paired_ratio(base, var).ci_hi, 0.0);
}

TEST(PairedSummary, RowsAndGeometricMeansOfThePairedMedians) {
  const Family& f = registry().family("hgemm");
  auto rec = [&](const char* shape, double median_speedup, PairedRatio p) {
    Result r = timed_record(f, "hgemm.a", shape, "bf16", {1.0, 1.0, 1.0});
    r.baseline = {"hgemm.base", median_speedup};
    r.paired = p;
    r.paired_with = "hgemm.base";
    return r;
  };
  EXPECT_EQ(paired_summary({timed_record(f, "hgemm.a", "m=8,n=8,k=8", "bf16", {1.0})}), "");
  const std::vector<Result> rs = {rec("m=8,n=8,k=8", 0.97, {40, 1.02, 0.99, 1.05}),
                                  rec("m=16,n=8,k=8", 1.10, {30, 1.08, 1.01, 1.12})};
  const std::string md = paired_summary(rs);
  EXPECT_NE(md.find("| hgemm.a | " + rs[0].problem.str() +
                    " | hgemm.base | 0.970x | 1.020x | 0.990x - 1.050x | 40 |"),
            std::string::npos)
      << md;
  char want[120];
  std::snprintf(want, sizeof want, "| hgemm.a | geometric mean, 2 problems | | | %.3fx | | |",
                std::sqrt(1.02 * 1.08));
  EXPECT_NE(md.find(want), std::string::npos) << md << "\nwant: " << want;
  EXPECT_EQ(md.find("In brackets"), std::string::npos);  // no interval recorded: as before
  // The record keeps it through JSON.
  const Result back = result_from_json(to_json(rs[1]));
  EXPECT_EQ(back.paired.pairs, 30);
  EXPECT_DOUBLE_EQ(back.paired.median, 1.08);
  EXPECT_DOUBLE_EQ(back.paired.p10, 1.01);
  EXPECT_DOUBLE_EQ(back.paired.p90, 1.12);
  EXPECT_EQ(back.paired_with, "hgemm.base");
  EXPECT_EQ(back.paired.ci_hi, 0.0);
  // With the median's interval: kept through JSON, printed beside the median.
  PairedRatio with_ci{40, 0.999, 0.99, 1.01};
  with_ci.ci_lo = 0.997;
  with_ci.ci_hi = 1.002;
  const Result c = rec("m=8,n=8,k=8", 1.0, with_ci);
  const Result c_back = result_from_json(to_json(c));
  EXPECT_DOUBLE_EQ(c_back.paired.ci_lo, 0.997);
  EXPECT_DOUBLE_EQ(c_back.paired.ci_hi, 1.002);
  const std::string md_ci = paired_summary({c});
  EXPECT_NE(md_ci.find("| 0.999x [0.997-1.002] | 0.990x - 1.010x | 40 |"), std::string::npos)
      << md_ci;
  EXPECT_NE(md_ci.find("In brackets"), std::string::npos);
  EXPECT_EQ(md_ci.find("rotated"), std::string::npos);
  // Two variants in a rotated order (klab before e98e963): said under the table; three, or a
  // drawn order, not.
  Result rot = c;
  rot.timing.method =
      "L2 flushed, events around 1 launch, stream held by a blocking kernel; interleaved launch by "
      "launch with 1 other variant(s), the order rotated each round";
  EXPECT_TRUE(rotated_pair_order(rot.timing));
  EXPECT_NE(paired_summary({rot}).find("rotated each round"), std::string::npos);
  for (const char* other : {"with 2 other variant(s), the order rotated each round",
                            "with 1 other variant(s), the order drawn at random each round"}) {
    rot.timing.method = std::string("L2 flushed; interleaved launch by launch ") + other;
    EXPECT_FALSE(rotated_pair_order(rot.timing)) << other;
    EXPECT_EQ(paired_summary({rot}).find("rotated each round"), std::string::npos) << other;
  }
}

TEST(DtypeSummary, FastestRungOfEachDtypeAgainstTheWidest) {
  const Family& f = registry().family("decode_attention");
  auto rec = [&](const char* variant, const char* shape, const char* dtype, double ms,
                 bool baseline = false) {
    Result r = timed_record(f, variant, shape, dtype, {}, baseline);
    r.timing.stats.median = ms;
    return r;
  };
  const char* a = "b=1,qlen=1,hq=8,hkv=2,d=128,page=16,len=64,min_len=64,empty=0";
  const char* b = "b=2,qlen=1,hq=8,hkv=2,d=128,page=16,len=64,min_len=64,empty=0";
  // One dtype a shape: nothing to compare.
  EXPECT_EQ(dtype_summary({rec("d.v06", a, "bf16", 2.0), rec("d.v06", b, "bf16", 1.0)}), "");
  const std::vector<Result> rs = {
      rec("d.v06", a, "bf16", 2.0),         rec("d.v03", a, "bf16", 3.0),
      rec("d.cudnn", a, "bf16", 1.0, true),  // a baseline: left out
      rec("d.v08", a, "e4m3", 1.0),         rec("d.v06", b, "bf16", 4.0),
      rec("d.v08", b, "e4m3", 0.5),
  };
  const std::string md = dtype_summary(rs);
  EXPECT_NE(
      md.find(std::string("| ") + a + " | bf16: d.v06 | 2.0000 | e4m3: d.v08 | 1.0000 | 2.00x |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| 8.00x |"), std::string::npos) << md;
  // Geometric mean of 2 and 8.
  EXPECT_NE(
      md.find(
          "| geometric mean, e4m3 over bf16, 2 shapes | | | | | 4.000x (min 2.00x, max 8.00x) |"),
      std::string::npos)
      << md;
  EXPECT_EQ(md.find("cudnn"), std::string::npos);
}

// Against another library's variant: the family's fastest rung at each problem that library
// timed (baselines and other libraries left out), medians and p10s, geometric mean per dtype.
TEST(AgainstSummary, FastestRungAgainstTheOtherLibrary) {
  const Family& f = registry().family("hgemm");
  auto rec = [&](const char* variant, const char* shape, double ms, bool baseline = false) {
    return timed_record(f, variant, shape, "bf16", std::vector<double>(10, ms), baseline);
  };
  std::vector<Result> rs = {
      rec("hgemm.v01_a", "m=8,n=8,k=8", 4.0),     rec("hgemm.v02_b", "m=8,n=8,k=8", 2.0),
      rec("hgemm.lib", "m=8,n=8,k=8", 3.0),       rec("hgemm.base", "m=8,n=8,k=8", 1.0, true),
      rec("hgemm.lib_slow", "m=8,n=8,k=8", 0.5),  rec("hgemm.v01_a", "m=16,n=8,k=8", 1.0),
      rec("hgemm.lib", "m=16,n=8,k=8", 3.0),      rec("hgemm.v01_a", "m=32,n=8,k=8", 1.0),
      rec("hgemm.v03_wrong", "m=8,n=8,k=8", 0.1),  // failed its check: never the fastest rung
  };
  rs.back().checked = true;
  rs.back().check.passed = false;
  EXPECT_EQ(against_summary(rs, "hgemm.none"), "");
  const std::string md = against_summary(rs, "hgemm.lib");
  // m=8: v02 (2.0 ms) is the fastest rung; the baseline (1.0) and another library (0.5) are not
  // rungs. m=16: v01 against 3.0. m=32: no record of the library.
  EXPECT_NE(
      md.find("| " + rs[0].problem.str() + " | hgemm.v02_b | 2.0000 | 3.0000 | 1.50x | 1.50x |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| hgemm.v01_a | 1.0000 | 3.0000 | 3.00x | 3.00x |"), std::string::npos) << md;
  EXPECT_EQ(md.find("m=32"), std::string::npos) << md;
  EXPECT_NE(md.find("| geometric mean, bf16, 2 problems | | | | 2.121x | 2.121x |"),
            std::string::npos)
      << md;
  // No clocks recorded (CPU records): "-" on both sides, no note.
  EXPECT_NE(md.find("| 2.0000 | 3.0000 | 1.50x | 1.50x | - / - |"), std::string::npos) << md;
  EXPECT_EQ(md.find("(apart)"), std::string::npos) << md;
}

// The other library is timed apart from klab's rounds: each side's SM clock range beside the
// ratio, and ranges that do not overlap marked, with a note under the table.
TEST(AgainstSummary, ClockRangesThatDoNotOverlapAreMarked) {
  const Family& f = registry().family("hgemm");
  auto rec = [&](const char* variant, const char* shape, double ms, int lo, int hi) {
    Result r = timed_record(f, variant, shape, "bf16", std::vector<double>(10, ms), false);
    r.timing.sm_clock_min_mhz = lo;
    r.timing.sm_clock_max_mhz = hi;
    return r;
  };
  std::vector<Result> rs = {
      rec("hgemm.v01_a", "m=8,n=8,k=8", 2.0, 1650, 1680),
      rec("hgemm.lib", "m=8,n=8,k=8", 2.0, 1890, 1965),
      rec("hgemm.v01_a", "m=16,n=8,k=8", 2.0, 1965, 1980),
      rec("hgemm.lib", "m=16,n=8,k=8", 2.0, 1935, 1980),
  };
  const std::string md = against_summary(rs, "hgemm.lib");
  EXPECT_NE(md.find("| 1650-1680 / 1890-1965 (apart) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1965-1980 / 1935-1980 |"), std::string::npos) << md;
  EXPECT_NE(md.find("not paired"), std::string::npos) << md;
  rs.erase(rs.begin(), rs.begin() + 2);  // only the overlapping pair: no note
  EXPECT_EQ(against_summary(rs, "hgemm.lib").find("not paired"), std::string::npos);
}

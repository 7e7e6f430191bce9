// The interleaved benchmark on the GPU (klab bench --interleave): the variants of one problem
// checked and held, then timed launch by launch. One rung paired with itself must read 1.00x
// within the spread of its own samples (a pairing that mixed rounds up, or compared a variant's
// samples against another's, fails here), and every record is timed cold with its method named.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

TEST(Interleaved, ARungPairedWithItselfReadsOne) {
  if (!device_info().present) GTEST_SKIP() << device_info().absent_reason;
  const Family& f = registry().family("vector_add");
  const Variant* v = f.find("vector_add.v01_naive");
  ASSERT_NE(v, nullptr);
  // 2^24 floats: a ~30 us launch, long beside the event and clock overheads.
  const Problem p = make_problem(f, "n=16777216", "f32");
  RunOptions opt;
  opt.bench_cfg.max_time_s = 0.3;
  ProblemInputs shared;
  std::vector<Result> rs;
  std::vector<std::shared_ptr<HeldLaunches>> held(2);
  for (int j = 0; j < 2; ++j) rs.push_back(run_variant_held(f, *v, p, opt, shared, &held[j]));
  for (int j = 0; j < 2; ++j) {
    ASSERT_EQ(rs[j].status, "ok") << rs[j].reason;
    ASSERT_TRUE(held[j]);
    EXPECT_FALSE(rs[j].timed);  // held, not yet timed
    EXPECT_TRUE(rs[j].checked && rs[j].check.passed);
  }
  rs[0].baseline_variant = true;  // the first copy stands as the baseline
  bench_held_interleaved(f, {&rs[0], &rs[1]}, held, opt.bench_cfg);
  for (const Result& r : rs) {
    ASSERT_TRUE(r.timed);
    EXPECT_EQ(r.timing.mode, "cold");
    EXPECT_NE(r.timing.method.find("interleaved"), std::string::npos) << r.timing.method;
    EXPECT_GE(r.timing.stats.n, 3);
  }
  EXPECT_EQ(rs[0].paired.pairs, 0);  // the baseline is not paired with itself
  const PairedRatio& x = rs[1].paired;
  EXPECT_EQ(rs[1].paired_with, v->info.id);
  ASSERT_GE(x.pairs, 3);
  EXPECT_LE(x.pairs, std::min(rs[0].timing.stats.n, rs[1].timing.stats.n));
  EXPECT_LE(x.p10, x.median);
  EXPECT_LE(x.median, x.p90);
  EXPECT_NEAR(x.median, 1.0, 0.03) << "p10 " << x.p10 << ", p90 " << x.p90;
}

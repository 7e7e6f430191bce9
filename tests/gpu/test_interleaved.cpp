// The interleaved benchmark on the GPU (klab bench --interleave): the variants of one problem
// checked and held, then timed launch by launch. One rung paired with itself must read 1.00x
// within the spread of its own samples (a pairing that mixed rounds up, or compared a variant's
// samples against another's, fails here), and every record is timed cold with its method named.
// The order of each round is drawn at random: the timing path has a period of four samples, and a
// rotated order tied each of two variants to one phase for the whole process (hgemm's v18 paired
// with itself at 512 x 4096 x 4096 read 0.97-1.03x); it must read 1.00x within 1%.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

// One rung held twice for one problem (checked, not yet timed), the first copy as the baseline.
struct SelfPair {
  ProblemInputs shared;
  std::vector<Result> rs;
  std::vector<std::shared_ptr<HeldLaunches>> held{2};

  SelfPair(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt) {
    for (int j = 0; j < 2; ++j) rs.push_back(run_variant_held(f, v, p, opt, shared, &held[j]));
    rs[0].baseline_variant = true;
  }
  // Times both launch by launch; the second copy's ratio over the first.
  const PairedRatio& bench(const Family& f, const RunOptions& opt) {
    bench_held_interleaved(f, {&rs[0], &rs[1]}, held, opt.bench_cfg);
    return rs[1].paired;
  }
};

}  // namespace

TEST(Interleaved, ARungPairedWithItselfReadsOne) {
  if (!device_info().present) GTEST_SKIP() << device_info().absent_reason;
  const Family& f = registry().family("vector_add");
  const Variant* v = f.find("vector_add.v01_naive");
  ASSERT_NE(v, nullptr);
  // 2^24 floats: a ~30 us launch, long beside the event and clock overheads.
  const Problem p = make_problem(f, "n=16777216", "f32");
  RunOptions opt;
  opt.bench_cfg.max_time_s = 0.3;
  opt.bench_cfg.samples_path = ::testing::TempDir() + "/interleaved_samples.txt";
  std::remove(opt.bench_cfg.samples_path.c_str());
  SelfPair sp(f, *v, p, opt);
  for (int j = 0; j < 2; ++j) {
    ASSERT_EQ(sp.rs[j].status, "ok") << sp.rs[j].reason;
    ASSERT_TRUE(sp.held[j]);
    EXPECT_FALSE(sp.rs[j].timed);  // held, not yet timed
    EXPECT_TRUE(sp.rs[j].checked && sp.rs[j].check.passed);
  }
  const PairedRatio& x = sp.bench(f, opt);
  for (const Result& r : sp.rs) {
    ASSERT_TRUE(r.timed);
    EXPECT_EQ(r.timing.mode, "cold");
    EXPECT_NE(r.timing.method.find("interleaved"), std::string::npos) << r.timing.method;
    EXPECT_GE(r.timing.stats.n, 3);
  }
  EXPECT_EQ(sp.rs[0].paired.pairs, 0);  // the baseline is not paired with itself
  EXPECT_EQ(sp.rs[1].paired_with, v->info.id);
  ASSERT_GE(x.pairs, 3);
  EXPECT_LE(x.pairs, std::min(sp.rs[0].timing.stats.n, sp.rs[1].timing.stats.n));
  EXPECT_LE(x.p10, x.median);
  EXPECT_LE(x.median, x.p90);
  EXPECT_NEAR(x.median, 1.0, 0.03) << "p10 " << x.p10 << ", p90 " << x.p90;
  // --samples: a line naming the two copies, then one line a sample, kept or dropped, each
  // variant once a round.
  std::ifstream in(opt.bench_cfg.samples_path);
  std::string header, line;
  ASSERT_TRUE(std::getline(in, header));
  EXPECT_EQ(header, "# " + p.str() + ": 0=" + v->info.id + " 1=" + v->info.id);
  std::array<int, 2> per_variant{};
  size_t round = 0, place = 0, j = 0;
  int set = 0, mhz = 0;
  double ms = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ASSERT_TRUE(fields >> round >> place >> j >> set >> ms >> mhz) << line;
    ASSERT_LT(j, 2u);
    EXPECT_LT(place, 2u);
    EXPECT_GT(ms, 0);
    ++per_variant[j];
  }
  for (int j2 = 0; j2 < 2; ++j2)
    EXPECT_EQ(per_variant[j2], static_cast<int>(sp.rs[j2].timing.samples_ms.size()) +
                                   sp.rs[j2].timing.discarded_samples);
}

TEST(Interleaved, AGemmPairedWithItselfReadsOne) {
  if (!device_info().present) GTEST_SKIP() << device_info().absent_reason;
  const Family& f = registry().family("hgemm");
  const Variant* v = f.find("hgemm.v18_wgmma_dispatch");
  ASSERT_NE(v, nullptr);
  const Problem p = make_problem(f, "m=512,n=4096,k=4096", "bf16");
  if (device_info().sm() < v->info.min_sm) GTEST_SKIP() << "hgemm.v18 needs a Hopper GPU";
  RunOptions opt;
  opt.bench_cfg.max_time_s = 0.3;
  SelfPair sp(f, *v, p, opt);
  for (const Result& r : sp.rs) ASSERT_EQ(r.status, "ok") << r.reason;
  const PairedRatio& x = sp.bench(f, opt);
  ASSERT_GE(x.pairs, 100);
  EXPECT_NEAR(x.median, 1.0, 0.01) << "p10 " << x.p10 << ", p90 " << x.p90;
}

// The sampled fp64 reference: which elements are drawn, how a sparse reference is compared, and
// that a wrong row in a large problem fails against the samples (issue: independent references).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "kernels/register.hpp"
#include "klab/harness/check.hpp"
#include "klab/harness/runner.hpp"
#include "klab/harness/sampling.hpp"

using namespace klab;

TEST(Sampling, CoversEdgesAndEnoughElements) {
  const OutputGrid g{4097, 3000};
  const std::vector<int64_t> idx = sample_indices(g, 7);
  ASSERT_TRUE(std::is_sorted(idx.begin(), idx.end()));
  ASSERT_EQ(std::adjacent_find(idx.begin(), idx.end()), idx.end());  // unique
  EXPECT_GE(static_cast<int64_t>(idx.size()), 4096);
  const std::set<int64_t> s(idx.begin(), idx.end());
  for (int64_t c = 0; c < g.cols; ++c) {  // whole first and last rows
    EXPECT_TRUE(s.count(c));
    EXPECT_TRUE(s.count((g.rows - 1) * g.cols + c));
  }
  for (int64_t r = 0; r < g.rows; ++r) {  // whole first and last columns
    EXPECT_TRUE(s.count(r * g.cols));
    EXPECT_TRUE(s.count(r * g.cols + g.cols - 1));
  }
  // The last 128-row tile starts at row 4096 and the last 128-column tile at column 2944: both
  // sides of each boundary, crossed.
  for (int64_t r : {4095, 4096})
    for (int64_t c : {2943, 2944}) EXPECT_TRUE(s.count(r * g.cols + c)) << r << "," << c;
  for (int64_t i : idx) ASSERT_TRUE(i >= 0 && i < g.rows * g.cols);
  EXPECT_EQ(idx, sample_indices(g, 7));  // a seed gives one sample
  EXPECT_NE(idx, sample_indices(g, 8));
}

TEST(Sampling, SmallOutputsAreWhole) {
  const std::vector<int64_t> idx = sample_indices({3, 5}, 1);
  ASSERT_EQ(idx.size(), 15u);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(idx[i], i);
}

TEST(Sampling, SparseReferenceJudgesOnlyItsElements) {
  Tensor t;
  t.spec = {"out", DType::f32, 100, Role::output};
  std::vector<float> v(100, 1.0f);
  v[50] = 7;  // wrong, but not sampled
  t.host.resize(400);
  std::memcpy(t.host.data(), v.data(), 400);
  RefOutput ref{{1, 1, 1}, {}, {0, 10, 99}};
  CheckResult r = compare_output(t, ref, {1e-6, 0, 0, 1});
  EXPECT_TRUE(r.passed) << r.summary();
  EXPECT_EQ(r.compared, 3);
  EXPECT_EQ(r.elements, 100);
  EXPECT_EQ(r.reference, "fp64 sampled");
  ref.index = {0, 50, 99};  // now it is
  r = compare_output(t, ref, {1e-6, 0, 0, 1});
  EXPECT_FALSE(r.passed);
  ASSERT_FALSE(r.first.empty());
  EXPECT_EQ(r.first[0].index, 50);
  ref.index = {0, 99, 10};  // unsorted: a bug in the family, not a pass
  EXPECT_ANY_THROW(compare_output(t, ref, {1e-6, 0, 0, 1}));
}

// Above the CPU-reference limit a rung is judged by fp64 samples: a rung right everywhere but in
// its last row fails; the right answer passes. (The GPU tests do the same at a headline shape
// with a wrong vendor baseline that is also the family's second-opinion reference.)
TEST(Sampling, WrongLastRowFailsAgainstSamples) {
  Family f = registry().family("hgemm");
  f.cpu_reference_max_flops = 1e5;  // so a small problem is judged by samples
  const Problem p = make_problem(f, "m=96,n=80,k=40", "bf16");
  ASSERT_TRUE(f.sampled(p));
  auto exact = [&f](const Problem& q, Buffers& b, bool break_last_row) {
    Reference ref;
    f.reference(q, b, ref);
    Tensor& c = b["c"];
    const int64_t n = q.dim("n");
    for (int64_t i = 0; i < c.spec.numel; ++i) {
      const double want = ref["c"].value[i];
      const bool last_row = i / n == q.dim("m") - 1;
      store_from_double(c.host.data(), c.spec.dtype, i,
                        break_last_row && last_row ? want + 1.0 + std::fabs(want) : want);
    }
  };
  Variant right;
  right.info = {"hgemm.test_exact", "fp64 rounded to bf16", 0, {DType::bf16}, true, Device::cpu};
  right.launch = [&](const Problem& q, Buffers& b, const LaunchArgs&) { exact(q, b, false); };
  Variant wrong = right;
  wrong.info.id = "hgemm.test_wrong_last_row";
  wrong.launch = [&](const Problem& q, Buffers& b, const LaunchArgs&) { exact(q, b, true); };
  RunOptions opt;
  opt.bench = false;
  const Result good = run_variant(f, right, p, opt);
  ASSERT_EQ(good.status, "ok") << good.reason;
  EXPECT_TRUE(good.check.passed) << good.check.summary();
  EXPECT_EQ(good.check.reference, "fp64 sampled");
  EXPECT_LT(good.check.compared, good.check.elements);
  const Result bad = run_variant(f, wrong, p, opt);
  ASSERT_EQ(bad.status, "ok") << bad.reason;
  EXPECT_FALSE(bad.check.passed);
  EXPECT_EQ(bad.check.bad, p.dim("n"));  // the whole last row is sampled, and only it is wrong

  // Variants of one problem share its inputs and sampled reference (ProblemInputs): made by the
  // first run only, and the checks after it are as strict (the wrong rung still fails).
  opt.dists = {Dist::normal, Dist::heavy};
  ProblemInputs shared;
  const Result first = run_variant(f, right, p, opt, shared);
  EXPECT_TRUE(first.check.passed) << first.check.summary();
  EXPECT_GT(first.host_seconds.at("total"), 0);
  for (const char* phase : {"inputs", "reference", "check"}) {
    bool seen = false;
    for (const auto& [name, s] : first.host_seconds.phases) seen |= name == phase;
    EXPECT_TRUE(seen) << phase;
  }
  ASSERT_EQ(shared.checks.size(), 2u);
  const Buffers* drawn = &shared.checks[0]->host;
  const Result again = run_variant(f, wrong, p, opt, shared);
  EXPECT_FALSE(again.check.passed);
  EXPECT_EQ(again.check.bad, 2 * p.dim("n"));  // the last row, under each distribution
  for (const auto& [name, s] : again.host_seconds.phases)
    EXPECT_TRUE(name != "inputs" && name != "reference") << name << " made again";
  EXPECT_EQ(&shared.checks[0]->host, drawn);
  const Result other =
      run_variant(f, right, make_problem(f, "m=96,n=80,k=41", "bf16"), opt, shared);
  EXPECT_TRUE(other.check.passed) << other.check.summary();
  EXPECT_GT(other.host_seconds.at("inputs"), 0);  // a new problem draws its own
}

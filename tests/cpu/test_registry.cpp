// The registry's invariants, and every CPU rung checked at every awkward shape.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

TEST(Registry, IdsAndLaddersAreWellFormed) {
  const std::regex id_re(R"(^[a-z0-9_]+\.((v|cpu)[0-9]{2}_[a-z0-9_]+|baseline_[a-z0-9_]+)$)");
  std::set<std::string> ids;
  ASSERT_FALSE(registry().families().empty());
  for (const auto& f : registry().families()) {
    EXPECT_FALSE(f.headline.empty()) << f.name;
    EXPECT_FALSE(f.awkward.empty()) << f.name;
    EXPECT_TRUE(f.tensors && f.reference && f.counts && f.tolerance) << f.name;
    std::string prev;
    for (const auto& v : f.ladder) {
      EXPECT_TRUE(std::regex_match(v.info.id, id_re)) << v.info.id;
      EXPECT_TRUE(ids.insert(v.info.id).second) << "duplicate " << v.info.id;
      EXPECT_FALSE(v.info.summary.empty()) << v.info.id;
      EXPECT_FALSE(v.info.dtypes.empty()) << v.info.id;
      if (v.info.id.find(".v") != std::string::npos) {
        EXPECT_LT(prev, v.info.id) << "ladder out of order in " << f.name;
        prev = v.info.id;
      }
    }
    for (const auto& p : f.headline) EXPECT_NO_THROW(validate_problem(f, p)) << p.str();
    for (const auto& p : f.awkward) EXPECT_NO_THROW(validate_problem(f, p)) << p.str();
  }
}

TEST(Registry, UnknownNamesAreUsageErrors) {
  EXPECT_THROW(registry().family("nope"), UsageError);
  EXPECT_THROW(registry().variant("vector_add.v99_nope"), UsageError);
  EXPECT_THROW(registry().variant("novariant"), UsageError);
}

TEST(Registry, ProblemValidation) {
  const Family& f = registry().family("vector_add");
  EXPECT_NO_THROW(make_problem(f, "n=5", "f32"));
  EXPECT_THROW(make_problem(f, "m=5", "f32"), UsageError);   // wrong dimension
  EXPECT_THROW(make_problem(f, "n=5", "e4m3"), UsageError);  // dtype the family does not take
  EXPECT_THROW(make_problem(f, "n=0", "f32"), UsageError);
  EXPECT_THROW(make_problem(f, "n=4611686018427387904", "f32"), UsageError);  // bytes overflow
}

TEST(Registry, LeftOutDimensionsTakeTheFamilysDefault) {
  const Family& f = registry().family("attention");
  const Problem p = make_problem(f, "b=1,nq=16,nkv=16,hq=4,hkv=2,d=64", "bf16");
  EXPECT_EQ(p.dim("causal"), 0);
  EXPECT_EQ(p.dim("amp"), 1);
  EXPECT_NE(p.str().find("causal=0"), std::string::npos) << p.str();  // records name it
  EXPECT_EQ(make_problem(f, "b=1,nq=16,nkv=16,hq=4,hkv=2,d=64,causal=1", "bf16").dim("causal"), 1);
  // A dimension without a default is still required.
  EXPECT_THROW(make_problem(f, "b=1,nq=16,nkv=16,hq=4,hkv=2", "bf16"), UsageError);
}

// Every CPU rung, every awkward shape, three input distributions: must pass.
TEST(Registry, CpuRungsPassAtAwkwardShapes) {
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::uniform, Dist::heavy};
  int checked = 0;
  for (const auto& f : registry().families())
    for (const auto& v : f.ladder) {
      if (v.info.device != Device::cpu) continue;
      for (const auto& p : f.awkward) {
        // Keep CI fast: the 2-core machine checks the awkward shapes a CPU finishes in moments.
        const Counts c = f.counts(p);
        if (c.flops > 2e9 || c.bytes > 3e7) continue;
        const Result r = run_variant(f, v, p, opt);
        if (r.status == "skipped") continue;
        ASSERT_EQ(r.status, "ok") << v.info.id << " " << p.str() << ": " << r.reason;
        EXPECT_TRUE(r.check.passed) << v.info.id << " " << p.str() << ": " << r.check.summary();
        ++checked;
      }
    }
  EXPECT_GT(checked, 0);
}

// A test must be able to fail: a deliberately wrong rung is caught.
TEST(Registry, WrongRungFailsItsCheck) {
  const Family& f = registry().family("vector_add");
  Variant bad = *f.find("vector_add.v00_cpu");
  bad.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    auto* out = static_cast<float*>(b["out"].data);
    const auto* a = static_cast<const float*>(b["a"].data);
    for (int64_t i = 0; i + 1 < p.dim("n"); ++i)
      out[i] = a[i];  // forgets b, skips the last element
  };
  RunOptions opt;
  opt.bench = false;
  const Result r = run_variant(f, bad, make_problem(f, "n=33", "f32"), opt);
  EXPECT_FALSE(r.check.passed);
  EXPECT_EQ(r.check.unwritten, 1);
  EXPECT_GT(r.check.bad, 0);
}

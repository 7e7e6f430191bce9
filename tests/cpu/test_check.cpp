#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "klab/harness/check.hpp"

using namespace klab;

namespace {
Tensor f32_tensor(std::vector<float> v) {
  Tensor t;
  t.spec = {"out", DType::f32, static_cast<int64_t>(v.size()), Role::output};
  t.host.resize(v.size() * 4);
  std::memcpy(t.host.data(), v.data(), v.size() * 4);
  return t;
}
RefOutput ref_of(std::vector<double> v) { return RefOutput{std::move(v), {}}; }
}  // namespace

TEST(Check, ExactMatchPasses) {
  const auto r = compare_output(f32_tensor({1, 2, 3}), ref_of({1, 2, 3}), {0, 0, 0, 0});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.max_abs, 0);
}

TEST(Check, RelativeToleranceIsPerElement) {
  const Tolerance tol{0, 1e-3, 0, 1};
  EXPECT_TRUE(compare_output(f32_tensor({1000.5f}), ref_of({1000}), tol).passed);
  EXPECT_FALSE(compare_output(f32_tensor({1.5f}), ref_of({1}), tol).passed);
}

TEST(Check, MagnitudeToleranceAllowsCancellation) {
  // ref = 1e-3 from terms of size ~1: an absolute error of 1e-6 is fine relative to the terms.
  Tensor t = f32_tensor({1.001e-3f});
  RefOutput ref{{1e-3}, {2.0}};
  EXPECT_FALSE(compare_output(t, ref, {0, 1e-4, 0, 1}).passed);
  EXPECT_TRUE(compare_output(t, ref, {0, 0, 1e-5, 1}).passed);
}

TEST(Check, RelL2Limit) {
  // 64 elements each within atol, but all off by 1%: the relative L2 error (1e-2) fails.
  const auto r = compare_output(f32_tensor(std::vector<float>(64, 1.01f)),
                                ref_of(std::vector<double>(64, 1.0)), {1, 1, 0, 1e-3});
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.rel_l2, 0.01, 1e-4);
}

TEST(Check, RelL2NotAppliedToTinyOutputs) {
  // One element that cancels: within its elementwise (magnitude) bound, so it passes even though
  // its relative error is large; a wrong value still fails on the elementwise bound.
  RefOutput ref{{1e-9}, {1.0}};
  EXPECT_TRUE(compare_output(f32_tensor({1.1e-9f}), ref, {0, 0, 1e-7, 1e-6}).passed);
  EXPECT_FALSE(compare_output(f32_tensor({1e-3f}), ref, {0, 0, 1e-7, 1e-6}).passed);
}

TEST(Check, UnwrittenAndNanAreCaughtWithIndices) {
  Tensor t = f32_tensor({1, 2, 3, 4});
  std::memset(t.host.data() + 4, 0xFF, 4);  // element 1 left poisoned
  reinterpret_cast<float*>(t.host.data())[3] = NAN;
  const auto r = compare_output(t, ref_of({1, 2, 3, 4}), {1, 1, 1, 1});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_EQ(r.nan, 1);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].index, 1);
  EXPECT_EQ(r.first[1].index, 3);
  EXPECT_NE(r.summary().find("unwritten"), std::string::npos);
}

TEST(Check, AnInfinityMustHaveTheReferencesSign) {
  const Tolerance tol{1e-3, 1e-3, 0, 1};
  EXPECT_TRUE(compare_output(f32_tensor({-INFINITY, 1}), ref_of({-INFINITY, 1}), tol).passed);
  const auto wrong_sign = compare_output(f32_tensor({INFINITY, 1}), ref_of({-INFINITY, 1}), tol);
  EXPECT_FALSE(wrong_sign.passed);
  EXPECT_EQ(wrong_sign.bad, 1);
  EXPECT_FALSE(compare_output(f32_tensor({0, 1}), ref_of({-INFINITY, 1}), tol).passed);
  EXPECT_FALSE(compare_output(f32_tensor({-INFINITY, 1}), ref_of({0, 1}), tol).passed);
}

TEST(Check, MergeKeepsTheWorst) {
  CheckResult a, b;
  b.passed = false;
  b.max_abs = 2;
  b.unwritten = 3;
  merge(a, b);
  EXPECT_FALSE(a.passed);
  EXPECT_EQ(a.max_abs, 2);
  EXPECT_EQ(a.unwritten, 3);
}

// The problem model the serving families need: integer tensors, inputs a family builds itself,
// a tolerance per output, a layout tag.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "klab/core/errors.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

// out[i] = sum of x over the i-th segment [offsets[i], offsets[i+1]); lse[i] = log sum exp of it.
Family segment_family() {
  Family f;
  f.name = "segments";
  f.dims = {"n", "s"};
  f.dtypes = {DType::f32};
  f.layouts = {"packed", "padded"};
  f.tensors = [](const Problem& p) {
    const int64_t n = p.dim("n"), s = p.dim("s");
    TensorSpec offsets{"offsets", DType::i64, s + 1, Role::input};
    // Sorted offsets from 0 to n: a valid segmentation, drawn from the seed.
    offsets.build = [n, s](const Buffers&, Tensor& t, uint64_t seed) {
      std::vector<int64_t> cut(static_cast<size_t>(s + 1));
      for (int64_t i = 1; i < s; ++i) cut[i] = static_cast<int64_t>(splitmix64(seed + i) % n);
      cut[0] = 0;
      cut[s] = n;
      std::sort(cut.begin(), cut.end());
      for (int64_t i = 0; i <= s; ++i) store_from_double(t.host.data(), DType::i64, i, cut[i]);
    };
    return std::vector<TensorSpec>{{"x", DType::f32, n, Role::input},
                                   offsets,
                                   {"out", DType::f32, s, Role::output},
                                   {"lse", DType::f32, s, Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const int64_t s = p.dim("s");
    auto& out = ref["out"].value;
    auto& lse = ref["lse"].value;
    out.assign(s, 0);
    lse.assign(s, -INFINITY);
    for (int64_t i = 0; i < s; ++i) {
      const auto lo = static_cast<int64_t>(b["offsets"].host_at(i));
      const auto hi = static_cast<int64_t>(b["offsets"].host_at(i + 1));
      double sum = 0, mx = -INFINITY;
      for (int64_t j = lo; j < hi; ++j) mx = std::max(mx, b["x"].host_at(j));
      double e = 0;
      for (int64_t j = lo; j < hi; ++j) {
        sum += b["x"].host_at(j);
        e += std::exp(b["x"].host_at(j) - mx);
      }
      out[i] = sum;
      lse[i] = hi > lo ? mx + std::log(e) : -INFINITY;
    }
  };
  f.counts = [](const Problem&) { return Counts{}; };
  f.tolerance = [](const Problem&) { return Tolerance{0, 0, 0, 0}; };
  f.output_tolerance = [](const Problem&, const std::string& out) {
    return out == "lse" ? Tolerance{1e-5, 1e-5, 0, 1} : Tolerance{1e-4, 1e-5, 0, 1};
  };
  return f;
}

// A CPU rung: the reference itself, with the log-sum-exp off by `lse_error`.
Variant rung(double lse_error) {
  Variant v;
  v.info = {"segments.cpu", "reference", 0, {DType::f32}, false, Device::cpu};
  v.launch = [lse_error](const Problem& p, Buffers& b, const LaunchArgs&) {
    Family f = segment_family();
    Reference ref;
    f.reference(p, b, ref);
    for (int64_t i = 0; i < p.dim("s"); ++i) {
      store_from_double(b["out"].host.data(), DType::f32, i, ref["out"].value[i]);
      store_from_double(b["lse"].host.data(), DType::f32, i, ref["lse"].value[i] + lse_error);
    }
  };
  return v;
}

}  // namespace

TEST(ProblemModel, IntegerTensorsRoundTrip) {
  EXPECT_EQ(dtype_size(DType::i32), 4);
  EXPECT_EQ(dtype_size(DType::i64), 8);
  EXPECT_TRUE(dtype_is_integer(DType::i64));
  EXPECT_EQ(parse_dtype("i32"), DType::i32);
  int64_t v[2];
  store_from_double(v, DType::i64, 1, 4294967296.0 * 3 + 7);
  EXPECT_EQ(v[1], 4294967296LL * 3 + 7);
  EXPECT_EQ(load_as_double(v, DType::i64, 1), 4294967296.0 * 3 + 7);
  int32_t w[1];
  store_from_double(w, DType::i32, 0, -12.0);
  EXPECT_EQ(w[0], -12);
}

TEST(ProblemModel, BuiltInputsAndPerOutputTolerances) {
  const Family f = segment_family();
  const Problem p = make_problem(f, "n=1000,s=37", "f32", 0, "padded");
  EXPECT_EQ(p.str(), "segments n=1000,s=37 f32 layout=padded");
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::heavy};
  const Result good = run_variant(f, rung(0), p, opt);
  ASSERT_EQ(good.status, "ok") << good.reason;
  EXPECT_TRUE(good.check.passed) << good.check.summary();
  // 1e-4 off: inside the output's tolerance (1e-4 absolute), outside the log-sum-exp's (1e-5).
  const Result bad = run_variant(f, rung(1e-4), p, opt);
  ASSERT_EQ(bad.status, "ok") << bad.reason;
  EXPECT_FALSE(bad.check.passed);
  ASSERT_FALSE(bad.check.first.empty());
  EXPECT_EQ(bad.check.first[0].tensor, "lse");
  EXPECT_THROW(make_problem(f, "n=10,s=2", "f32", 0, "strided"), UsageError);
}

#include "klab/harness/check.hpp"

#include <cmath>
#include <cstdio>

#include "klab/core/errors.hpp"
#include "klab/core/rng.hpp"

namespace klab {

std::string CheckResult::summary() const {
  char buf[256];
  if (passed) {
    std::snprintf(buf, sizeof buf, "pass (max_abs %.3g, max_rel %.3g, rel_l2 %.3g)", max_abs,
                  max_rel, rel_l2);
    return buf;
  }
  std::string s = "FAIL:";
  if (unwritten) s += " " + std::to_string(unwritten) + " unwritten;";
  if (nan) s += " " + std::to_string(nan) + " NaN/Inf;";
  if (bad) s += " " + std::to_string(bad) + " out of tolerance;";
  std::snprintf(buf, sizeof buf, " max_abs %.3g, rel_l2 %.3g", max_abs, rel_l2);
  s += buf;
  for (size_t i = 0; i < first.size() && i < 3; ++i) {
    std::snprintf(buf, sizeof buf, "; %s[%lld] = %.6g, want %.6g", first[i].tensor.c_str(),
                  static_cast<long long>(first[i].index), first[i].got, first[i].want);
    s += buf;
  }
  return s;
}

CheckResult compare_output(const Tensor& out, const RefOutput& refo, const Tolerance& tol,
                           int max_mismatches) {
  const std::vector<double>& ref = refo.value;
  const bool has_mag = !refo.magnitude.empty();
  KLAB_CHECK(!has_mag || refo.magnitude.size() == ref.size(),
             "magnitude size differs from value size");
  KLAB_CHECK(static_cast<int64_t>(ref.size()) == out.spec.numel,
             "reference size differs from output " + out.spec.name);
  CheckResult r;
  double err2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
  int64_t unwritten = 0, nan = 0, bad = 0;
  const int64_t n = out.spec.numel;
  // Classifies element i: 0 ok, 1 unwritten, 2 NaN/Inf, 3 out of tolerance (or finite vs non-finite).
  auto classify = [&](int64_t i, double& got, double& e) -> int {
    const double want = ref[i];
    e = 0;
    if (is_poison(out.host.data(), out.spec.dtype, i)) {
      got = std::nan("");
      return 1;
    }
    got = out.host_at(i);
    if (!std::isfinite(got))
      return (std::isfinite(want) || std::isnan(got) != std::isnan(want)) ? 2 : 0;
    if (!std::isfinite(want)) return 3;
    e = std::fabs(got - want);
    return e > tol.atol + tol.rtol * std::fabs(want) +
                       (has_mag ? tol.mtol * refo.magnitude[i] : 0.0)
               ? 3
               : 0;
  };
#pragma omp parallel for reduction(+ : err2, ref2, unwritten, nan, bad) reduction(max : max_abs, max_rel)
  for (int64_t i = 0; i < n; ++i) {
    double got, e;
    const int c = classify(i, got, e);
    unwritten += c == 1;
    nan += c == 2;
    bad += c == 3;
    if (c == 0 || c == 3) {
      if (std::isfinite(got) && std::isfinite(ref[i])) {
        err2 += e * e;
        ref2 += ref[i] * ref[i];
        max_abs = std::max(max_abs, e);
        if (ref[i] != 0) max_rel = std::max(max_rel, e / std::fabs(ref[i]));
      }
    }
  }
  r.max_abs = max_abs;
  r.max_rel = max_rel;
  r.unwritten = unwritten;
  r.nan = nan;
  r.bad = bad;
  if (unwritten + nan + bad > 0)  // the first failing elements, in index order
    for (int64_t i = 0; i < n && static_cast<int>(r.first.size()) < max_mismatches; ++i) {
      double got, e;
      if (classify(i, got, e) != 0) r.first.push_back({out.spec.name, i, got, ref[i]});
    }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  // The relative L2 error is a statistic over the output: with a handful of elements, one that
  // cancels to ~0 (a 1x1x1 GEMM with beta*c ~ -alpha*a*b) makes it anything. Below
  // kMinElementsForRelL2 only the elementwise bound judges (it always applies).
  const bool l2_applies = n >= kMinElementsForRelL2;
  r.passed =
      r.unwritten == 0 && r.nan == 0 && r.bad == 0 && (!l2_applies || r.rel_l2 <= tol.max_rel_l2);
  return r;
}

void merge(CheckResult& a, const CheckResult& b) {
  a.passed = a.passed && b.passed;
  a.max_abs = std::max(a.max_abs, b.max_abs);
  a.max_rel = std::max(a.max_rel, b.max_rel);
  a.rel_l2 = std::max(a.rel_l2, b.rel_l2);
  a.nan += b.nan;
  a.unwritten += b.unwritten;
  a.bad += b.bad;
  for (const auto& m : b.first)
    if (a.first.size() < 8) a.first.push_back(m);
}

}  // namespace klab

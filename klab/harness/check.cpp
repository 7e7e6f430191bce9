#include "klab/harness/check.hpp"

#include <cmath>
#include <cstdio>

#include "klab/core/errors.hpp"
#include "klab/core/rng.hpp"

namespace klab {

std::string CheckResult::summary() const {
  char buf[256];
  if (passed) {
    std::snprintf(buf, sizeof buf, "pass (max_abs %.3g, max_rel %.3g, rel_l2 %.3g%s)", max_abs,
                  max_rel, rel_l2, plain_fp64() ? "" : (", " + reference).c_str());
    return buf;
  }
  std::string s = plain_fp64() ? "FAIL:" : "FAIL (" + reference + "):";
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
  const bool sampled = !refo.index.empty();
  KLAB_CHECK(!has_mag || refo.magnitude.size() == ref.size(),
             "magnitude size differs from value size");
  KLAB_CHECK(!sampled || refo.index.size() == ref.size(), "index size differs from value size");
  KLAB_CHECK(sampled || static_cast<int64_t>(ref.size()) == out.spec.numel,
             "reference size differs from output " + out.spec.name);
  CheckResult r;
  double err2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
  int64_t unwritten = 0, nan = 0, bad = 0;
  const int64_t n = static_cast<int64_t>(ref.size());  // reference entries s, at element at(s)
  auto at = [&](int64_t s) { return sampled ? refo.index[s] : s; };
  if (sampled)
    for (int64_t s = 0; s < n; ++s)
      KLAB_CHECK(at(s) >= 0 && at(s) < out.spec.numel && (s == 0 || at(s) > at(s - 1)),
                 "sampled reference of " + out.spec.name + ": indices not sorted or out of range");
  // Classifies entry s: 0 ok, 1 unwritten, 2 NaN/Inf, 3 out of tolerance (or finite vs non-finite).
  auto classify = [&](int64_t s, double& got, double& e) -> int {
    const double want = ref[s];
    const int64_t i = at(s);
    e = 0;
    if (is_poison(out.host.data(), out.spec.dtype, i)) {
      got = std::nan("");
      return 1;
    }
    got = out.host_at(i);
    // An infinity is right only as the same infinity (an empty attention row's log-sum-exp is
    // -inf; +inf there is wrong, and so is a finite value).
    if (std::isinf(got) && std::isinf(want)) return got == want ? 0 : 3;
    if (!std::isfinite(got))
      return (std::isfinite(want) || std::isnan(got) != std::isnan(want)) ? 2 : 0;
    if (!std::isfinite(want)) return 3;
    e = std::fabs(got - want);
    return e > tol.atol + tol.rtol * std::fabs(want) +
                       (has_mag ? tol.mtol * refo.magnitude[s] : 0.0)
               ? 3
               : 0;
  };
#pragma omp parallel for reduction(+ : err2, ref2, unwritten, nan, bad) reduction(max : max_abs, max_rel)
  for (int64_t s = 0; s < n; ++s) {
    double got, e;
    const int c = classify(s, got, e);
    unwritten += c == 1;
    nan += c == 2;
    bad += c == 3;
    if (c == 0 || c == 3) {
      if (std::isfinite(got) && std::isfinite(ref[s])) {
        err2 += e * e;
        ref2 += ref[s] * ref[s];
        max_abs = std::max(max_abs, e);
        if (ref[s] != 0) max_rel = std::max(max_rel, e / std::fabs(ref[s]));
      }
    }
  }
  r.max_abs = max_abs;
  r.max_rel = max_rel;
  r.unwritten = unwritten;
  r.nan = nan;
  r.bad = bad;
  r.compared = n;
  r.elements = out.spec.numel;
  r.reference = sampled ? "fp64 sampled" : "fp64";
  if (unwritten + nan + bad > 0)  // the first failing elements, in index order
    for (int64_t s = 0; s < n && static_cast<int>(r.first.size()) < max_mismatches; ++s) {
      double got, e;
      if (classify(s, got, e) != 0) r.first.push_back({out.spec.name, at(s), got, ref[s]});
    }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  // The relative L2 error is a statistic over the output: with a handful of elements, one that
  // cancels to ~0 (a 1x1x1 GEMM with beta*c ~ -alpha*a*b) makes it anything. Below
  // kMinElementsForRelL2 only the elementwise bound judges (it always applies). Over a sample it
  // estimates the whole output's.
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
  a.compared += b.compared;
  a.elements += b.elements;
  if (a.reference.empty())
    a.reference = b.reference;
  else if (!b.reference.empty() && a.reference.find(b.reference) == std::string::npos)
    a.reference += ", " + b.reference;
  for (const auto& m : b.first)
    if (a.first.size() < 8) a.first.push_back(m);
}

}  // namespace klab

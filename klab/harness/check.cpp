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
  KLAB_CHECK(!has_mag || refo.magnitude.size() == ref.size(), "magnitude size differs from value size");
  KLAB_CHECK(static_cast<int64_t>(ref.size()) == out.spec.numel,
             "reference size differs from output " + out.spec.name);
  CheckResult r;
  double err2 = 0, ref2 = 0;
  const int64_t n = out.spec.numel;
  for (int64_t i = 0; i < n; ++i) {
    const double want = ref[i];
    bool fail = false;
    double got;
    if (is_poison(out.host.data(), out.spec.dtype, i)) {
      ++r.unwritten;
      fail = true;
      got = std::nan("");
    } else {
      got = out.host_at(i);
      if (!std::isfinite(got)) {
        if (std::isfinite(want) || std::isnan(got) != std::isnan(want)) {
          ++r.nan;
          fail = true;
        }
      } else if (!std::isfinite(want)) {
        ++r.bad;  // finite where the reference is not
        fail = true;
      } else {
        const double e = std::fabs(got - want);
        err2 += e * e;
        ref2 += want * want;
        if (e > r.max_abs) r.max_abs = e;
        if (want != 0 && e / std::fabs(want) > r.max_rel) r.max_rel = e / std::fabs(want);
        if (e > tol.atol + tol.rtol * std::fabs(want) + (has_mag ? tol.mtol * refo.magnitude[i] : 0.0)) {
          ++r.bad;
          fail = true;
        }
      }
    }
    if (fail && static_cast<int>(r.first.size()) < max_mismatches)
      r.first.push_back({out.spec.name, i, got, want});
  }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.passed = r.unwritten == 0 && r.nan == 0 && r.bad == 0 && r.rel_l2 <= tol.max_rel_l2;
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

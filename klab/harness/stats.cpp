#include "klab/harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace klab {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats s;
  s.n = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / s.n;
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  std::vector<double> dev(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) dev[i] = std::fabs(samples[i] - s.median);
  const double mad = percentile(dev, 0.5);
  s.rel_noise = s.median > 0 ? 1.4826 * mad / s.median : 0;
  return s;
}

}  // namespace klab

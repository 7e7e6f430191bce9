#pragma once
// Summary statistics of timing samples.
#include <vector>

namespace klab {

struct SampleStats {
  double median = 0, p10 = 0, p90 = 0, mean = 0, min = 0, max = 0;
  /// Robust relative spread: 1.4826 * MAD / median (the MAD-based sigma over the median),
  /// insensitive to the rare preempted sample that would inflate a standard deviation.
  double rel_noise = 0;
  int n = 0;
};

/// Percentile by linear interpolation between order statistics (q in [0, 1]).
double percentile(std::vector<double> v, double q);
SampleStats summarize(const std::vector<double>& samples);

}  // namespace klab

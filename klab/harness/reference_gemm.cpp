#include "klab/harness/reference_gemm.hpp"

#include <cmath>

#include "klab/core/errors.hpp"

namespace klab {

void gemm_at(const Tensor& a, const Tensor& b, int64_t m, int64_t n, int64_t k,
             const std::vector<int64_t>& index, std::vector<double>& value,
             std::vector<double>& magnitude) {
  KLAB_CHECK(a.spec.numel == m * k && b.spec.numel == k * n, "gemm_at: operand sizes");
  // B's columns as contiguous fp64 rows (B transposed), so each sample is two contiguous dots.
  // Only the columns the sample touches are gathered: a column is k strided loads.
  std::vector<int64_t> col_slot(static_cast<size_t>(n), -1);
  int64_t cols = 0;
  for (int64_t s : index) {
    KLAB_CHECK(s >= 0 && s < m * n, "gemm_at: index out of range");
    if (col_slot[s % n] < 0) col_slot[s % n] = cols++;
  }
  std::vector<double> bt(static_cast<size_t>(cols * k));
  std::vector<int64_t> slot_col(static_cast<size_t>(cols));
  for (int64_t j = 0; j < n; ++j)
    if (col_slot[j] >= 0) slot_col[col_slot[j]] = j;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t kk = 0; kk < k; ++kk) bt[c * k + kk] = b.host_at(kk * n + slot_col[c]);
  value.assign(index.size(), 0.0);
  magnitude.assign(index.size(), 0.0);
  const int64_t samples = static_cast<int64_t>(index.size());
#pragma omp parallel
  {
    std::vector<double> arow(static_cast<size_t>(k));
    int64_t row = -1;
#pragma omp for schedule(static)
    for (int64_t s = 0; s < samples; ++s) {
      const int64_t i = index[s] / n, j = index[s] % n;
      if (i != row) {  // indices are sorted: a thread converts each row of A it needs once
        for (int64_t kk = 0; kk < k; ++kk) arow[kk] = a.host_at(i * k + kk);
        row = i;
      }
      const double* bc = &bt[col_slot[j] * k];
      double v = 0, g = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double t = arow[kk] * bc[kk];
        v += t;
        g += std::fabs(t);
      }
      value[s] = v;
      magnitude[s] = g;
    }
  }
}

}  // namespace klab

// v00 CPU: row-wise softmax as an OpenMP loop over rows on the host (runs without a GPU), in
// fp32 like the GPU rungs: max, sum of expf(x - max), then scale by 1 / sum. The sum is
// pairwise: a plain running fp32 sum over a long row absorbs the small terms once it is 1/u times
// larger than them (heavy-tailed rows lose ~2e-5 of the sum at cols = 4096, over the tolerance).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reduction/family.hpp"

namespace klab::reduction {

namespace {

/// Pairwise (recursive halving) fp32 sum: error <= ~log2(n) u relative for positive terms.
float pairwise_sum(const float* v, int64_t n) {
  if (n <= 16) {
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) s += v[i];
    return s;
  }
  const int64_t h = n / 2;
  return pairwise_sum(v, h) + pairwise_sum(v + h, n - h);
}

}  // namespace

Variant softmax_v00_cpu() {
  Variant v;
  v.info.id = "softmax.v00_cpu";
  v.info.summary = "OpenMP loop over rows on the host, fp32, pairwise sum";
  v.info.dtypes = {DType::f32, DType::bf16};
  v.info.device = Device::cpu;
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) {
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    const DType t = p.dtype;
    const void* x = b["x"].data;
    void* y = b["y"].data;
#pragma omp parallel
    {
      std::vector<float> e(static_cast<size_t>(cols));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) {
          e[c] = static_cast<float>(load_as_double(x, t, r * cols + c));
          m = std::max(m, e[c]);
        }
        for (int64_t c = 0; c < cols; ++c) e[c] = std::exp(e[c] - m);
        const float inv = 1.f / pairwise_sum(e.data(), cols);
        for (int64_t c = 0; c < cols; ++c) store_from_double(y, t, r * cols + c, e[c] * inv);
      }
    }
  };
  return v;
}

}  // namespace klab::reduction

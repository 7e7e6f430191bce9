// v00 CPU: the product as an OpenMP loop on the host, in fp32 (runs without a GPU).
// Blocks of kRows rows x kCols columns of C stay in L1 as fp32 accumulators while each row of
// B's column block streams past once per row block; the innermost loop runs along a row of B
// and C, so it vectorises. Fine for small problems; refuses above 1e10 FLOPs (minutes on a
// laptop-sized CPU).
#include <algorithm>
#include <vector>

#include "kernels/sgemm/family.hpp"

namespace klab::sgemm {

namespace {

constexpr int64_t kRows = 4;
constexpr int64_t kCols = 512;
constexpr double kMaxFlops = 1e10;

void launch_cpu(const Problem& p, Buffers& b) {
  const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
  const float* A = b.ptr<float>("a");
  const float* B = b.ptr<float>("b");
  float* C = b.ptr<float>("c");
  const int64_t row_blocks = (m + kRows - 1) / kRows, col_blocks = (n + kCols - 1) / kCols;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      float acc[kRows][kCols] = {};
      const int64_t i0 = rb * kRows, i1 = std::min(m, i0 + kRows);
      const int64_t j0 = cb * kCols, w = std::min(n, j0 + kCols) - j0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float* brow = B + kk * n + j0;
        for (int64_t i = i0; i < i1; ++i) {
          const float a = A[i * k + kk];
          float* ac = acc[i - i0];
          for (int64_t j = 0; j < w; ++j) ac[j] += a * brow[j];
        }
      }
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < w; ++j) {
          float& c = C[i * n + j0 + j];
          c = kAlpha * acc[i - i0][j] + kBeta * c;
        }
    }
  }
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "sgemm.v00_cpu";
  v.info.summary = "OpenMP blocked fp32 loop on the host (small problems only)";
  v.info.dtypes = {DType::f32};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    const double flops = 2.0 * double(p.dim("m")) * double(p.dim("n")) * double(p.dim("k"));
    if (flops > kMaxFlops) return Status::no("above 1e10 FLOPs: too slow for the host loop");
    return Status::yes();
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) { launch_cpu(p, b); };
  return v;
}

}  // namespace klab::sgemm

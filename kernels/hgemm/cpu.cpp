// v00 CPU: the same GEMM on the host with OpenMP, accumulating in fp32 like the GPU rungs (the
// products of two bf16/f16 values are exact in fp32, so only the additions round), then one
// rounding to the output dtype. Runs without a GPU; refuses problems above kCpuRungMaxFlops.
// Blocked like the reference: a task is a (32-row, 256-column) block of C whose fp32 accumulators
// live on the stack, each B row segment reused by the 32 rows while it is in L1.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/hgemm/family.hpp"

namespace klab::hgemm {

namespace {

std::vector<float> to_float(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.spec.numel));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t.spec.numel; ++i)
    out[i] = static_cast<float>(load_as_double(t.data, t.spec.dtype, i));
  return out;
}

void launch_cpu(const Problem& p, Buffers& buf) {
  const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
  // Host scratch for the widened inputs (a CPU rung; the no-allocation rule is the GPU launch contract).
  const std::vector<float> a = to_float(buf["a"]), b = to_float(buf["b"]);
  void* c = buf["c"].data;
  constexpr int64_t kRows = 32, kCols = 256;
  const int64_t row_blocks = (m + kRows - 1) / kRows, col_blocks = (n + kCols - 1) / kCols;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < row_blocks * col_blocks; ++task) {
    const int64_t i0 = (task / col_blocks) * kRows, j0 = (task % col_blocks) * kCols;
    const int64_t rows = std::min(m, i0 + kRows) - i0, jn = std::min(n, j0 + kCols) - j0;
    float acc[kRows][kCols] = {};
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* brow = &b[static_cast<size_t>(kk * n + j0)];
      for (int64_t r = 0; r < rows; ++r) {
        const float x = a[static_cast<size_t>((i0 + r) * k + kk)];
        for (int64_t j = 0; j < jn; ++j) acc[r][j] += x * brow[j];
      }
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < jn; ++j)
        store_from_double(c, p.dtype, (i0 + r) * n + j0 + j, acc[r][j]);
  }
}

}  // namespace

Variant cpu_v00() {
  Variant v;
  v.info.id = "hgemm.v00_cpu";
  v.info.summary = "OpenMP blocked loop on the host, fp32 accumulation";
  v.info.dtypes = {DType::bf16, DType::f16};
  v.info.device = Device::cpu;
  v.can_implement = [](const Problem& p) {
    const double flops = 2.0 * p.dim("m") * p.dim("n") * p.dim("k");
    if (flops <= kCpuRungMaxFlops) return Status::yes();
    char why[160];
    std::snprintf(why, sizeof why,
                  "%.3g flops is above the CPU rung's limit of %.3g (seconds per run on the host)",
                  flops, kCpuRungMaxFlops);
    return Status::no(why);
  };
  v.launch = [](const Problem& p, Buffers& b, const LaunchArgs&) { launch_cpu(p, b); };
  return v;
}

}  // namespace klab::hgemm

// Problem, inputs, reference, counts, tolerances and shapes of the hgemm family:
// C = A @ B with A (m x k), B (k x n), C (m x n), all row-major, all in the problem's dtype
// (bf16 or f16); every rung accumulates in fp32 and rounds once to the output dtype.
#include "kernels/hgemm/family.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>

#include "klab/core/errors.hpp"
#include "klab/harness/reference_gemm.hpp"

namespace klab::hgemm {

namespace {

Problem problem(int64_t m, int64_t n, int64_t k, DType t, int64_t misalign = 0) {
  Problem p;
  p.family = "hgemm";
  p.shape.dims = {{"m", m}, {"n", n}, {"k", k}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

// Speed: the square shapes of docs/design.md's targets (cuBLASLt measured beside every run).
std::vector<Problem> headline() {
  return {problem(4096, 4096, 4096, DType::bf16), problem(8192, 8192, 8192, DType::bf16),
          problem(4096, 4096, 4096, DType::f16)};
}

// Shapes that break careless kernels. The fast rungs copy 16-byte rows, so the list mixes shapes
// where K % 8 == 0 and N % 8 == 0 (vector path, partial tiles at the M/N/K edges: 129x136x40,
// 120x200x72 (v19's 128 tokens), v19's token halves: 40x136x16 (64 tokens, the second half 8
// rows; K = 16), 12x136x72 (16 tokens, halves of 8 and 4; K's second tile partly past K) and
// 24x136x104 (64 tokens, the second half empty), 1000^3) with shapes where they do not (element
// path: odd or prime dims, K = 1, misaligned pointers). 4095x4097x4096 exceeds kCpuReferenceMaxFlops: fp64 samples and cuBLASLt judge it.
std::vector<Problem> awkward() {
  std::vector<Problem> v;
  for (auto [m, n, k] : std::initializer_list<std::array<int64_t, 3>>{{1, 1, 1},
                                                                      {1, 1, 8},
                                                                      {64, 64, 1},
                                                                      {256, 256, 8},
                                                                      {33, 65, 24},
                                                                      {97, 101, 103},
                                                                      {127, 129, 136},
                                                                      {129, 136, 40},
                                                                      {120, 200, 72},
                                                                      {40, 136, 16},
                                                                      {12, 136, 72},
                                                                      {24, 136, 104},
                                                                      {1, 4096, 4096},
                                                                      {4096, 8, 512},
                                                                      {1000, 1000, 1000},
                                                                      {4095, 4097, 4096}})
    v.push_back(problem(m, n, k, DType::bf16));
  v.push_back(
      problem(127, 128, 136, DType::bf16, 1));  // every base pointer 2 bytes off 16-byte alignment
  for (auto [m, n, k] : std::initializer_list<std::array<int64_t, 3>>{
           {33, 65, 24}, {127, 129, 136}, {1000, 1000, 1000}})
    v.push_back(problem(m, n, k, DType::f16));
  return v;
}

// Host copy of a row-major tensor as doubles (the exact values of the bf16/f16 inputs).
std::vector<double> to_double(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.spec.numel));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t.spec.numel; ++i) out[i] = t.host_at(i);
  return out;
}

// value = A @ B and magnitude = |A| @ |B|, in fp64, blocked so the B rows of a task stay in
// cache while 32 rows of A use them: tasks are (32-row, 256-column) blocks of C.
void reference_gemm(int64_t m, int64_t n, int64_t k, const std::vector<double>& a,
                    const std::vector<double>& b, std::vector<double>& value,
                    std::vector<double>& magnitude) {
  constexpr int64_t kRows = 32, kCols = 256;
  value.assign(static_cast<size_t>(m * n), 0.0);
  magnitude.assign(static_cast<size_t>(m * n), 0.0);
  const int64_t row_blocks = (m + kRows - 1) / kRows, col_blocks = (n + kCols - 1) / kCols;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < row_blocks * col_blocks; ++task) {
    const int64_t i0 = (task / col_blocks) * kRows, j0 = (task % col_blocks) * kCols;
    const int64_t i1 = std::min(m, i0 + kRows), jn = std::min(n, j0 + kCols) - j0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const double* brow = &b[static_cast<size_t>(kk * n + j0)];
      for (int64_t i = i0; i < i1; ++i) {
        const double x = a[static_cast<size_t>(i * k + kk)];
        if (x == 0) continue;
        const double ax = std::fabs(x);
        double* v = &value[static_cast<size_t>(i * n + j0)];
        double* g = &magnitude[static_cast<size_t>(i * n + j0)];
        for (int64_t j = 0; j < jn; ++j) {
          v[j] += x * brow[j];
          g[j] += ax * std::fabs(brow[j]);
        }
      }
    }
  }
}

constexpr double kU32 = 1.0 / (1 << 24);  // fp32 unit roundoff, the accumulator's

}  // namespace

Family make_hgemm() {
  Family f;
  f.name = "hgemm";
  f.summary = "C = A @ B, row-major, bf16/f16 in and out, fp32 accumulation (tensor cores)";
  f.dims = {"m", "n", "k"};
  f.dtypes = {DType::bf16, DType::f16};
  f.ceiling = "bf16_tc";
  // The rungs that beat cuBLASLt at some shapes also probe the ceiling, at the headline shapes
  // and Qwen3-8B's down projection (K = 12288), the fastest shape measured.
  f.ceiling_rungs = {"v14_wgmma_tma_store", "v18_wgmma_dispatch"};
  f.ceiling_shapes = {problem(4096, 4096, 12288, DType::bf16),
                      problem(2048, 4096, 12288, DType::bf16)};
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    for (const char* d : {"m", "n", "k"})
      if (p.dim(d) > INT_MAX) throw UsageError(std::string("hgemm: ") + d + " must be below 2^31");
  };
  f.tensors = [](const Problem& p) {
    const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
    return std::vector<TensorSpec>{
        {"a", p.dtype, checked_product({m, k}, "hgemm a"), Role::input},
        {"b", p.dtype, checked_product({k, n}, "hgemm b"), Role::input},
        {"c", p.dtype, checked_product({m, n}, "hgemm c"), Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    auto& c = ref["c"];
    reference_gemm(p.dim("m"), p.dim("n"), p.dim("k"), to_double(b["a"]), to_double(b["b"]),
                   c.value, c.magnitude);
  };
  f.counts = [](const Problem& p) {
    const double m = static_cast<double>(p.dim("m")), n = static_cast<double>(p.dim("n")),
                 k = static_cast<double>(p.dim("k"));
    return Counts{2 * m * n * k, (m * k + k * n + m * n) * dtype_size(p.dtype)};
  };

  // Against the fp64 reference (which has the magnitude g = sum_k |a_ik b_kj|):
  // - the products of two bf16/f16 values are exact in fp32, so the only errors are the fp32
  //   accumulation and the final rounding to the output type;
  // - accumulation: recursive fp32 summation is bounded by gamma_k ~ k * u32 * g (the CPU rung,
  //   one rounding per FMA). The tensor cores add 8 exact products at a time and truncate rather
  //   than round (Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021): about 2 ulp
  //   per block of 8, i.e. ~k/2 * u32 * g. mtol = 2 k u32 covers both with room for the
  //   second-order terms and the output rounding of the accumulated error;
  // - output rounding: one rounding to nearest, <= u_out * |c| (u_out = 2^-8 bf16, 2^-11 f16);
  // - atol: half the smallest subnormal of the output type (f16 results can be subnormal);
  // - relative L2: the rounding's RMS is below u_out / sqrt(3); random-sign accumulation errors
  //   are ~sqrt(k) u32 relative, coherent (truncating) ones at most ~k u32: u_out + k u32.
  // The relative L2 is the tight test; the elementwise bound catches isolated wrong elements.
  f.tolerance = [](const Problem& p) {
    const double u = dtype_unit_roundoff(p.dtype), k = static_cast<double>(p.dim("k"));
    const double atol = p.dtype == DType::f16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134);
    return Tolerance{atol, u, 2 * k * kU32, u + k * kU32};
  };

  // Too large for the whole CPU reference: fp64 dot products at a sample of C's elements judge
  // every rung (under `tolerance` above, magnitudes included), and cuBLASLt's whole output is a
  // second comparison. cuBLASLt's output is itself rounded to the output type, and there is no
  // magnitude. Elementwise: both sides round once (2 u_out |c|), and
  // accumulation-order differences are absolute errors near outputs that cancel to ~0: atol is
  // 4 ulp of the typical output scale, sqrt(k) for the harness's O(1) inputs (normal, uniform,
  // Student-t). Relative L2: two roundings plus the accumulation term as above. A missing K
  // slice or a wrong tile shows as a relative L2 of percents, far above this.
  f.cpu_reference_max_flops = kCpuReferenceMaxFlops;
  f.output_grid = [](const Problem& p, const std::string&) {
    return OutputGrid{p.dim("m"), p.dim("n")};
  };
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string&,
                      const std::vector<int64_t>& index, RefOutput& out) {
    gemm_at(b["a"], b["b"], p.dim("m"), p.dim("n"), p.dim("k"), index, out.value, out.magnitude);
  };
  f.gpu_reference_variant = kGpuReference;
  f.gpu_reference_tolerance = [](const Problem& p) {
    const double u = dtype_unit_roundoff(p.dtype), k = static_cast<double>(p.dim("k"));
    return Tolerance{4 * u * std::sqrt(k), 2 * u, 0, 2 * u + k * kU32};
  };
  return f;
}

}  // namespace klab::hgemm

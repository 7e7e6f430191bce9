// Problem, inputs, fp64 reference, counts, tolerances and shapes of the sgemm family.
#include "kernels/sgemm/family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "klab/core/errors.hpp"
#include "klab/harness/reference_gemm.hpp"

namespace klab::sgemm {

namespace {

Problem problem(int64_t m, int64_t n, int64_t k, int64_t misalign = 0) {
  Problem p;
  p.family = "sgemm";
  p.shape.dims = {{"m", m}, {"n", n}, {"k", k}};
  p.dtype = DType::f32;
  p.misalign = misalign;
  return p;
}

// Rows of C computed together, and columns per pass, in the reference: a block of B's row
// (kRefCols floats) is reused by kRefRows rows of A while the fp64 accumulators (2 x 8 x 1024
// doubles = 128 KiB) stay in L2.
constexpr int64_t kRefRows = 8;
constexpr int64_t kRefCols = 1024;

void reference(const Problem& p, const Buffers& b, Reference& ref) {
  const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
  const float* A = b.host<float>("a");
  const float* B = b.host<float>("b");
  const float* C = b.host<float>("c");
  RefOutput& out = ref["c"];
  out.value.assign(static_cast<size_t>(m * n), 0.0);
  out.magnitude.assign(static_cast<size_t>(m * n), 0.0);
  const double alpha = kAlpha, beta = kBeta;
  const int64_t row_blocks = (m + kRefRows - 1) / kRefRows;
  const int64_t col_blocks = (n + kRefCols - 1) / kRefCols;
#pragma omp parallel
  {
    std::vector<double> acc(kRefRows * kRefCols), mag(kRefRows * kRefCols);
#pragma omp for schedule(dynamic) collapse(2)
    for (int64_t rb = 0; rb < row_blocks; ++rb) {
      for (int64_t cb = 0; cb < col_blocks; ++cb) {
        const int64_t i0 = rb * kRefRows, i1 = std::min(m, i0 + kRefRows);
        const int64_t j0 = cb * kRefCols, j1 = std::min(n, j0 + kRefCols), w = j1 - j0;
        std::fill(acc.begin(), acc.end(), 0.0);
        std::fill(mag.begin(), mag.end(), 0.0);
        for (int64_t kk = 0; kk < k; ++kk) {
          const float* brow = B + kk * n + j0;
          for (int64_t i = i0; i < i1; ++i) {
            const double a = A[i * k + kk];
            double* ac = acc.data() + (i - i0) * kRefCols;
            double* mg = mag.data() + (i - i0) * kRefCols;
            for (int64_t j = 0; j < w; ++j) {
              const double t = a * static_cast<double>(brow[j]);  // exact: 24 x 24 bits < 53
              ac[j] += t;
              mg[j] += std::fabs(t);
            }
          }
        }
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) {
            const double c = C[i * n + j];
            const size_t o = static_cast<size_t>(i * n + j),
                         r = static_cast<size_t>((i - i0) * kRefCols + (j - j0));
            out.value[o] = alpha * acc[r] + beta * c;
            out.magnitude[o] = std::fabs(alpha) * mag[r] + std::fabs(beta * c);
          }
      }
    }
  }
}

double u_f32() { return dtype_unit_roundoff(DType::f32); }

// The widest input distribution we generate is Student-t with 3 degrees of freedom (variance 3);
// normal has 1, uniform(-1, 1) 1/3. E|a b| <= sigma_a sigma_b, so 3 bounds a typical |a b|.
constexpr double kMaxInputVariance = 3.0;

}  // namespace

Family make_sgemm() {
  Family f;
  f.name = "sgemm";
  f.summary = "C = alpha * A @ B + beta * C, FP32, row-major (alpha = 1.5, beta = 0.5, C in place)";
  f.dims = {"m", "n", "k"};
  f.dtypes = {DType::f32};
  f.ceiling = "fp32";

  // The kernels index each matrix with 32-bit offsets; 2^20 elements of headroom keep the
  // offsets of a tile hanging over the last row in range too.
  f.validate = [](const Problem& p) {
    const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max() - (int64_t(1) << 20);
    if (m > kMax || n > kMax || k > kMax || m * k > kMax || k * n > kMax || m * n > kMax)
      throw UsageError(
          "sgemm: each of A (m*k), B (k*n) and C (m*n) must have at most 2^31 - 2^20 elements");
  };
  f.tensors = [](const Problem& p) {
    const int64_t m = p.dim("m"), n = p.dim("n"), k = p.dim("k");
    return std::vector<TensorSpec>{
        {"a", DType::f32, checked_product({m, k}, "sgemm A"), Role::input},
        {"b", DType::f32, checked_product({k, n}, "sgemm B"), Role::input},
        {"c", DType::f32, checked_product({m, n}, "sgemm C"), Role::inout}};
  };
  f.reference = reference;
  // FLOPs: the 2mnk of the product only; the epilogue's 3mn (two multiplies and an add per
  // element) is left out, as cuBLAS and the literature count it. Bytes: A, B and C read once,
  // C written once.
  f.counts = [](const Problem& p) {
    const double m = double(p.dim("m")), n = double(p.dim("n")), k = double(p.dim("k"));
    return Counts{2 * m * n * k, 4.0 * (m * k + k * n + 2 * m * n)};
  };

  // Against the fp64 reference, with magnitude M = |alpha| sum_k |a_ik b_kj| + |beta c_ij|.
  // Every rung accumulates each output in fp32 over k products, in its own order (FMA chains, or
  // a multiply and an add per term: the same bound), then applies the epilogue (two more
  // roundings). The worst case is |err| <= gamma_{k+2} M ~ (k+2) u M (Higham, Accuracy and
  // Stability of Numerical Algorithms, eq. 3.5). That needs every rounding error aligned; as
  // independent mean-zero errors each at most u M, their sum exceeds lambda sqrt(k+2) u M with
  // probability <= 2 exp(-lambda^2 / 2) (Hoeffding; the probabilistic bound of Higham & Mary,
  // SISC 2019). lambda = 8: 2.5e-14 per element, so never across all the elements we check, yet
  // a single dropped product (~M/k) still fails for k < 16000. mtol = u min(k+2, 8 sqrt(k+2)):
  // the deterministic bound where it is tighter. Zero-mean data keep partial sums near sqrt(i),
  // so the observed error is ~u M, far below. The relative L2 error of random data is
  // ~0.3 sqrt(k) u; 8 sqrt(k+2) u catches systematic errors (a dropped k-tile moves it by
  // ~1/sqrt(k) or more).
  f.tolerance = [](const Problem& p) {
    const double k = double(p.dim("k")), u = u_f32();
    return Tolerance{0, 0, u * std::min(k + 2, 8 * std::sqrt(k + 2)), 8 * std::sqrt(k + 2) * u};
  };

  // Above 2e10 FLOPs (about 2150^3) the whole fp64 CPU reference takes too long: fp64 samples of
  // C judge every rung under `tolerance` above, and cuBLAS's whole output (fp32, TF32 off) is a
  // second comparison. In that comparison both results carry fp32 error and there is no magnitude,
  // so the scale comes from the inputs: S = |alpha| k var_max + |beta| sqrt(var_max) bounds a
  // typical M. For zero-mean data each result's error has std ~0.41 u |alpha| k var (partial
  // sums grow as sqrt(i), each rounding ~u/sqrt(3) of one), the difference of the two ~0.6 u
  // |alpha| k var; atol = 8 u S is about 14 of those std at the widest distribution, 41 at
  // normal data, and still 100x below a dropped product (~1) at k = 4096. rtol = 8 sqrt(k+2) u
  // covers outlier elements dominated by one heavy-tailed product (their error scales with their
  // own |value|), and the L2 bound is the CPU one widened by sqrt(2) for the second fp32 result,
  // rounded up to 12.
  f.cpu_reference_max_flops = 2e10;
  f.output_grid = [](const Problem& p, const std::string&) {
    return OutputGrid{p.dim("m"), p.dim("n")};
  };
  // C is in place: `b` holds C's input values here (the reference runs before any variant).
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string&,
                      const std::vector<int64_t>& index, RefOutput& out) {
    gemm_at(b["a"], b["b"], p.dim("m"), p.dim("n"), p.dim("k"), index, out.value, out.magnitude);
    const Tensor& c = b["c"];
    const double alpha = kAlpha, beta = kBeta;
    for (size_t s = 0; s < index.size(); ++s) {
      const double c0 = c.host_at(index[s]);
      out.value[s] = alpha * out.value[s] + beta * c0;
      out.magnitude[s] = std::fabs(alpha) * out.magnitude[s] + std::fabs(beta * c0);
    }
  };
  f.gpu_reference_variant = "sgemm.baseline_cublas";
  f.gpu_reference_tolerance = [](const Problem& p) {
    const double k = double(p.dim("k")), u = u_f32();
    const double scale = std::fabs(double(kAlpha)) * k * kMaxInputVariance +
                         std::fabs(double(kBeta)) * std::sqrt(kMaxInputVariance);
    return Tolerance{8 * u * scale, 8 * std::sqrt(k + 2) * u, 0, 12 * std::sqrt(k + 2) * u};
  };

  // 4096^3: 137 GFLOP, every matrix 64 MiB (the working set, 256 MiB, far above the 60 MiB L2).
  f.headline = {problem(4096, 4096, 4096)};
  // Awkward: a 1x1x1 product; a row vector times a matrix (m = 1) and a matrix times a column
  // (n = 1), both with odd sizes; sizes that no tile, vector width or warp divides; K = 1; K
  // not a multiple of any tile; every base pointer shifted by one float (dims all multiples of
  // 4: only the pointer check keeps the 16-byte paths off); one below and one above 4096. Those
  // all leave the 16-byte rungs (v06, v11-v18) on their scalar fallback; two more shapes take
  // their own kernels (n and k multiples of 4, aligned) with partial tiles at every edge.
  f.awkward = {problem(1, 1, 1),        problem(1, 4097, 4095),    problem(4095, 1, 4097),
               problem(33, 65, 17),     problem(127, 129, 131),    problem(300, 257, 1),
               problem(64, 64, 64, 1),  problem(4095, 4095, 4095), problem(4097, 4097, 4097),
               problem(1028, 516, 260), problem(132, 260, 36)};
  return f;
}

}  // namespace klab::sgemm

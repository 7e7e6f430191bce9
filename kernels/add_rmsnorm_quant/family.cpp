// Problem, inputs, reference, counts, tolerances and shapes of the add_rmsnorm_quant family. The
// tensors and the arithmetic are described in family.hpp.
//
// The shape: tokens, hidden, group (0: a scale per token; else a scale per `group` consecutive
// elements of a row, 128 for DeepSeek-style 1 x 128 blocks), and two dimensions a shape may leave
// out: zero_rows (rows whose residual is -x, so h = 0 there: scale 0, q = 0) and outlier (one
// channel per row of magnitude `outlier`, the massive activations of LLM residual streams: the
// rest of a per-token row then quantises to e4m3's subnormals or to zero). Inputs are bf16; the
// dtype of the problem is bf16.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/add_rmsnorm_quant/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/reference_attention.hpp"

namespace klab::add_rmsnorm_quant {

namespace {

constexpr double kU32 = 1.0 / (1 << 24);  // fp32 unit roundoff

int64_t elements(const Dims& s) {
  return checked_product({s.tokens, s.hidden}, "add_rmsnorm_quant elements");
}

Problem shape(int64_t tokens, int64_t hidden, int64_t group, int64_t zero_rows = 0,
              int64_t outlier = 0) {
  return problem(Dims{tokens, hidden, group, zero_rows, outlier});
}

// Issue 15: tokens 1 to 16384 at Qwen3-8B's hidden size, both granularities. 1 and 16 are
// decode batches (launch-bound: the fused kernel's one launch against the baseline's three),
// 4096 and 16384 prefill chunks (bandwidth-bound: the copy ceiling).
std::vector<Problem> headline() {
  std::vector<Problem> v;
  for (int64_t group : {0, 128})
    for (int64_t tokens : {1, 16, 4096, 16384}) v.push_back(shape(tokens, 4096, group));
  return v;
}

// Shapes that break careless kernels: token counts that fill no warp or wave (1, 3, 17, 1000)
// at hidden sizes of one 1 x 128 group, of a short row and of a row no power of two divides
// (128, 1024, 5120: v01's 1, 1 and 4 chunks per thread); zero rows (a few, and every row);
// outliers of 2^16 (the rest of a per-token row lands in e4m3's subnormals), 2^20 (it underflows
// to zero) and 2^30 (large magnitudes: the sum of squares near 2^70); hidden 1000 (per token
// only: not a multiple of 128) and 100 (not a multiple of 8: the GPU rungs refuse); group 64;
// wide rows (16384: v01's 8 vectors per thread; 24576: 384 threads of 8).
std::vector<Problem> awkward() {
  std::vector<Problem> v;
  for (int64_t hidden : {128, 1024, 5120})
    for (int64_t tokens : {1, 3, 17, 1000})
      for (int64_t group : {0, 128}) v.push_back(shape(tokens, hidden, group));
  v.push_back(shape(64, 4096, 128, /*zero_rows*/ 5));
  v.push_back(shape(33, 4096, 0, /*zero_rows*/ 33));
  v.push_back(shape(64, 4096, 0, 0, /*outlier*/ int64_t(1) << 16));
  v.push_back(shape(64, 4096, 128, 0, int64_t(1) << 16));
  v.push_back(shape(17, 4096, 0, 3, int64_t(1) << 20));
  v.push_back(shape(7, 4096, 128, 0, int64_t(1) << 30));
  v.push_back(shape(9, 1000, 0));
  v.push_back(shape(5, 100, 0));
  v.push_back(shape(9, 1024, 64));
  v.push_back(shape(3, 16384, 128));
  v.push_back(shape(2, 24576, 0));
  return v;
}

// The fp64 reference of the listed rows, each computed once, in parallel.
void reference_rows(const Dims& s, const Buffers& b, const std::vector<int64_t>& rows,
                    std::vector<RowReference>& out) {
  out.resize(rows.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i)
    reference_row(s, b, rows[i], out[i]);
}

}  // namespace

Dims dims_of(const Problem& p) {
  return Dims{p.dim("tokens"), p.dim("hidden"), p.dim("group"), p.dim("zero_rows"),
              p.dim("outlier")};
}

Problem problem(const Dims& s) {
  Problem p;
  p.family = "add_rmsnorm_quant";
  p.shape.dims = {{"tokens", s.tokens},
                  {"hidden", s.hidden},
                  {"group", s.group},
                  {"zero_rows", s.zero_rows},
                  {"outlier", s.outlier}};
  p.dtype = DType::bf16;
  return p;
}

void build_residual(const Dims& s, const Tensor& x, Tensor& residual, uint64_t seed) {
  fill_random(residual.host.data(), DType::bf16, residual.spec.numel, Dist::normal, seed);
  std::vector<int64_t> rows(static_cast<size_t>(s.tokens));
  std::iota(rows.begin(), rows.end(), 0);
  for (size_t i = rows.size(); i > 1; --i)  // a seeded Fisher-Yates shuffle picks the zero rows
    std::swap(rows[i - 1], rows[splitmix64(seed ^ (0x2e50 + i)) % i]);
  std::vector<char> zero(static_cast<size_t>(s.tokens), 0);
  for (int64_t i = 0; i < s.zero_rows; ++i) zero[rows[i]] = 1;
  for (int64_t r = 0; r < s.tokens; ++r) {
    const int64_t base = r * s.hidden;
    if (zero[r]) {
      for (int64_t i = 0; i < s.hidden; ++i)  // -x is exact in bf16: h = 0 exactly
        store_from_double(residual.host.data(), DType::bf16, base + i, -x.host_at(base + i));
    } else if (s.outlier > 0) {
      const uint64_t hash = splitmix64(seed + 0x9e37 * static_cast<uint64_t>(r + 1));
      const int64_t c = static_cast<int64_t>(hash % static_cast<uint64_t>(s.hidden));
      const double sign = (hash >> 63) ? -1.0 : 1.0;
      store_from_double(residual.host.data(), DType::bf16, base + c,
                        sign * static_cast<double>(s.outlier));
    }
  }
}

void reference_row(const Dims& s, const Buffers& b, int64_t row, RowReference& out) {
  const Tensor &x = b["x"], &res = b["residual"], &w = b["weight"];
  const int64_t n = s.hidden, base = row * n;
  out.h.resize(static_cast<size_t>(n));
  out.y.resize(out.h.size());
  out.q.resize(out.h.size());
  out.scales.assign(static_cast<size_t>(s.groups()), 0.0);
  // h = bf16(x + residual). The sum of two bf16 values is exact in fp64 (unless their exponents
  // differ by more than 45, when the smaller is far below half a bf16 ulp of the larger and every
  // rounding route gives the larger); rounding it to fp32 and then to bf16 equals rounding it to
  // bf16 directly: where the fp32 sum is inexact, the operands' exponents differ by more than 16,
  // so the sum lies within 2^-16 of the larger operand, far from any midpoint between bf16 values.
  // That is also what a kernel's fp32 add and __float2bfloat16_rn compute: residual_out is exact.
  double sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float sum = static_cast<float>(x.host_at(base + i) + res.host_at(base + i));
    out.h[i] = bf16_bits_to_float(float_to_bf16_bits(sum));
    sum_sq += out.h[i] * out.h[i];
  }
  const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + kEps);
  for (int64_t i = 0; i < n; ++i) out.y[i] = out.h[i] * inv_rms * w.host_at(i);
  const int64_t span = s.span();
  for (int64_t g = 0; g < s.groups(); ++g) {
    double amax = 0;
    for (int64_t i = g * span; i < (g + 1) * span; ++i) amax = std::max(amax, std::fabs(out.y[i]));
    const double scale = amax / kE4m3Max;
    out.scales[g] = scale;
    for (int64_t i = g * span; i < (g + 1) * span; ++i)
      out.q[i] = scale > 0 ? out.y[i] / scale : 0.0;  // an all-zero slice: scale 0, q 0
  }
}

// The rungs compute y in fp32 from the bf16 h (exactly the reference's h, see reference_row):
//  - the sum of the H squares (each exact in fp32: a bf16 square has 16 significant bits) in any
//    order and tree, positive terms: relative error <= (H - 1) u32;
//  - the mean (a division by H, or a product with a rounded 1/H) and + eps: 3 u32;
//  - rsqrtf: at most 2 ulp, <= 4 u32 relative; the square root halves the sum's error, so
//    1/rms errs by <= ((H + 2) / 2 + 4) u32;
//  - the products h * inv_rms * weight: 2 u32; the unfused baseline rounds y to bf16 in its
//    workspace: u_bf16 (the fused rungs keep y in fp32; the bound covers both); 2 u32 spare:
//  e_y = u_bf16 + ((H + 2) / 2 + 8) u32, relative to each |y_i| (4.0e-3 at H = 4096).
double y_error_bound(int64_t hidden) {
  return dtype_unit_roundoff(DType::bf16) + (static_cast<double>(hidden + 2) / 2 + 8) * kU32;
}

Family make_add_rmsnorm_quant() {
  Family f;
  f.name = "add_rmsnorm_quant";
  f.summary =
      "residual add, RMSNorm and FP8 e4m3 quantisation per token or per 1 x group slice: the new "
      "residual (bf16), q (e4m3) and its fp32 scales";
  f.dims = {"tokens", "hidden", "group", "zero_rows", "outlier"};
  f.zero_ok_dims = {"group", "zero_rows", "outlier"};
  f.default_dims = {{"zero_rows", 0}, {"outlier", 0}};
  f.dtypes = {DType::bf16};
  // Reads x, residual and weight; writes residual_out, q and the scales: about 4 bytes read per
  // 3 written (bf16 in, bf16 + e4m3 out), nearest to the copy mix of the measured ceilings.
  f.ceiling = "copy";
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    const Dims s = dims_of(p);
    auto fail = [](const std::string& why) { throw UsageError("add_rmsnorm_quant: " + why); };
    if (s.group > 0 && s.hidden % s.group != 0)
      fail("group (" + std::to_string(s.group) + ") must divide hidden (" +
           std::to_string(s.hidden) + "), or be 0 for a scale per token");
    if (s.zero_rows > s.tokens) fail("zero_rows must not exceed tokens");
    if (s.outlier > (int64_t(1) << 40)) fail("outlier above 2^40 (its square overflows fp32 sums)");
    if (s.hidden > (int64_t(1) << 24)) fail("hidden above 2^24");
    elements(s);
  };
  f.tensors = [](const Problem& p) {
    const Dims s = dims_of(p);
    const int64_t n = elements(s);
    TensorSpec residual{"residual", DType::bf16, n, Role::input};
    if (s.zero_rows > 0 || s.outlier > 0)
      residual.build = [s](const Buffers& b, Tensor& t, uint64_t seed) {
        build_residual(s, b["x"], t, seed);
      };
    return std::vector<TensorSpec>{{"x", DType::bf16, n, Role::input},
                                   residual,
                                   {"weight", DType::bf16, s.hidden, Role::input},
                                   {"residual_out", DType::bf16, n, Role::output},
                                   {"q", DType::e4m3, n, Role::output},
                                   {"scales", DType::f32, s.tokens * s.groups(), Role::output}};
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const Dims s = dims_of(p);
    std::vector<int64_t> rows(static_cast<size_t>(s.tokens));
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<RowReference> rr;
    reference_rows(s, b, rows, rr);
    auto& h = ref["residual_out"].value;
    auto& q = ref["q"].value;
    auto& sc = ref["scales"].value;
    h.resize(static_cast<size_t>(elements(s)));
    q.resize(h.size());
    sc.resize(static_cast<size_t>(s.tokens * s.groups()));
    for (int64_t r = 0; r < s.tokens; ++r) {
      std::copy(rr[r].h.begin(), rr[r].h.end(), h.begin() + r * s.hidden);
      std::copy(rr[r].q.begin(), rr[r].q.end(), q.begin() + r * s.hidden);
      std::copy(rr[r].scales.begin(), rr[r].scales.end(), sc.begin() + r * s.groups());
    }
  };
  // Bytes: x, residual (bf16) and weight read once; residual_out (bf16), q (one byte) and the
  // scales (fp32) written once. Flops per element: the add, the square and its accumulation, the
  // two products of the norm, |y|'s maximum and the quantising product: 7.
  f.counts = [](const Problem& p) {
    const Dims s = dims_of(p);
    const double n = static_cast<double>(s.tokens) * static_cast<double>(s.hidden);
    const double bytes = n * (2 + 2 + 2 + 1) + 2.0 * static_cast<double>(s.hidden) +
                         4.0 * static_cast<double>(s.tokens * s.groups());
    return Counts{7 * n, bytes};
  };

  // Tolerances, output by output, with e_y = y_error_bound(H) (above).
  // residual_out: exact (reference_row: the fp32 add rounded to bf16 is the correctly rounded
  //   sum); any bf16 difference is >= 2^-8 relative, so nothing is allowed.
  // scales: scale' = max_i |y'_i| / 448. Each |y'_i| is within e_y |y_i| of |y_i|, so the maximum
  //   is within e_y of amax; the division by 448 (or a product with a rounded 1/448): 2 u32.
  //   rtol = e_y + 4 u32, atol 0: an all-zero slice's scale must be exactly 0.
  // q: judged against v = y / scale in fp64 (the reference's own scale): q * scale compared with
  //   y, divided by the reference's scale, whose own error the scales' check bounds. The rung
  //   quantises v' = y' * (448 / amax') to e4m3 (round to nearest even, saturating):
  //   - |v' - v| <= e_v |v| with e_v = 2 e_y + 8 u32 (y_i's error, amax's error through the
  //     scale, the reciprocal and the product; second-order terms in the spare);
  //   - e4m3 keeps 3 mantissa bits: in the normal range (|v'| >= 2^-6) rounding moves v' by at
  //     most half an ulp, 2^-4 |v'|; in the subnormal range (spacing 2^-9) by at most 2^-10;
  //     saturation (v' just above 448 when amax' rounds low) moves it towards v, inside e_v;
  //   so |q - v| <= 2^-10 + 2^-4 (1 + e_v) |v| + e_v |v|: atol = 2^-10,
  //   rtol = 2^-4 + e_v (1 + 2^-4) (7.1e-2 at H = 4096). A rung that truncates instead of
  //   rounding errs by up to 2^-3 |v| (an ulp at the bottom of a binade) and fails; one that is
  //   a step off anywhere fails there.
  //   Relative L2 (a statistic): rounding errors spread uniformly over +-half an ulp have an RMS
  //   of ulp / sqrt(12) <= 2^-3 |v| / sqrt(12) in the normal range, so the whole output's
  //   relative L2 error stays below 2^-3 / sqrt(12) + e_v (4.4e-2; random data sits near
  //   2.4e-2, since most values lie above the bottom of their binade). The subnormals' errors
  //   (2^-10 each) are negligible against ||v||, whose elements reach 448 in every slice.
  f.output_tolerance = [](const Problem& p, const std::string& output) {
    const double e_y = y_error_bound(dims_of(p).hidden);
    if (output == "residual_out") return Tolerance{0, 0, 0, 0};
    if (output == "scales") return Tolerance{0, e_y + 4 * kU32, 0, e_y + 4 * kU32};
    const double e_v = 2 * e_y + 8 * kU32;
    const double half_ulp = std::ldexp(1.0, -4);
    return Tolerance{std::ldexp(1.0, -10), half_ulp + e_v * (1 + half_ulp), 0,
                     std::ldexp(1.0, -3) / std::sqrt(12.0) + e_v};
  };
  f.tolerance = [f_tol = f.output_tolerance](const Problem& p) { return f_tol(p, "q"); };

  // Sampled at large sizes, by rows: residual_out and q as T rows of H, the scales as T rows of
  // H / group (or 1); each sampled row is computed once, whole.
  f.cpu_reference_max_flops = kCpuReferenceMaxFlops;
  f.output_grid = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    return OutputGrid{s.tokens, output == "scales" ? s.groups() : s.hidden};
  };
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string& output,
                      const std::vector<int64_t>& index, RefOutput& out) {
    const Dims s = dims_of(p);
    const int64_t cols = output == "scales" ? s.groups() : s.hidden;
    const std::vector<int64_t> rows = sampled_rows(index, [&](int64_t e) { return e / cols; });
    std::vector<RowReference> rr;
    reference_rows(s, b, rows, rr);
    out.value.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      const RowReference& r = rr[row_position(rows, index[i] / cols)];
      const int64_t c = index[i] % cols;
      out.value[i] = output == "scales" ? r.scales[c] : output == "q" ? r.q[c] : r.h[c];
    }
  };
  return f;
}

}  // namespace klab::add_rmsnorm_quant

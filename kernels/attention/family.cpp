// Problem, inputs, reference, counts, tolerances and shapes of the attention family (forward).
// The layout and the masking are described in family.hpp.
//
// The causal flag is a dimension (`causal=0` or `causal=1`), not a layout tag: Problem::layout
// names the tensors' memory order (a later "bhnd" tag must combine with either mask, which one
// tag per problem cannot express without a tag for every pair), while a dimension is part of the
// problem's identity everywhere a shape is (its text, the records, the reports' keys) and needs no
// change to the harness. `amp` (a power of two) scales Q and K for the large-magnitude checks
// (the safe-softmax path), exactly: 1 for every timed shape.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/attention/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/reference_attention.hpp"

namespace klab::attention {

namespace {

constexpr double kU32 = 1.0 / (1 << 24);  // fp32 unit roundoff: scores, sums, accumulators
// The FP8 tensor cores' accumulation: an FP8 wgmma adds a k32 step's 32 products to the
// accumulator keeping about 14 bits of mantissa (DeepGEMM's measurement on Hopper, the reason it
// promotes partial sums to CUDA-core fp32 every 128 of K). Modelled as the 33 operands aligned to
// the largest of them and each truncated by up to 2^-13 of it: a step errs by up to 33 x 2^-13 of
// its |products| and the accumulator's magnitude, kFp8Step, which the sums of |terms| bound.
// (Up to 2^-13 a step of the accumulated magnitude alone was measured too tight: attention v12's
// lse at amp = 8 erred by 1.3e-3 of its score in 61e7274's run, against 6.1e-4 allowed.)
constexpr double kFp8Acc = 1.0 / (1 << 13);
constexpr double kFp8Step = 33 * kFp8Acc;

// Row `row` (d elements) of a (.., d) input tensor as double, times `scale`: bf16 and f16 by
// their bits (exact), e4m3 by its value (an e4m3 value, 4 significant bits, times an fp32 scale,
// 24, is exact in fp64).
void load_row(const Tensor& t, int64_t row, int64_t d, double* out, double scale = 1.0) {
  const int64_t at = row * d;
  const auto bits = [&] { return reinterpret_cast<const uint16_t*>(t.host.data()) + at; };
  if (t.spec.dtype == DType::bf16) {
    for (int64_t i = 0; i < d; ++i) out[i] = bf16_bits_to_float(bits()[i]);
  } else if (t.spec.dtype == DType::f16) {
    for (int64_t i = 0; i < d; ++i) out[i] = half_bits_to_float(bits()[i]);
  } else {
    for (int64_t i = 0; i < d; ++i) out[i] = t.host_at(at + i);
  }
  if (scale != 1.0)
    for (int64_t i = 0; i < d; ++i) out[i] *= scale;
}

// The scale of input tensor `name` ("q_scale", "k_scale", "v_scale"): 1 unless the problem is
// e4m3.
double input_scale(const Buffers& b, const char* name) {
  return b["q"].spec.dtype == DType::e4m3 ? b[name].host_at(0) : 1.0;
}

// First-order error model of a rung that follows FlashAttention's arithmetic, for one output
// element o_d of a row with exact softmax weights w_j = exp(s_j - lse) over its visible keys:
//   |o_d' - o_d| <= u_out |o_d| + c0 * m_d + expm1(c1 * A) * m_d + c2 * t_d
// with m_d = sum_j w_j |v_jd| (the sum of |terms|), A = max_j scale sum_i |q_i k_ji| (the bound
// of the row's scores), t_d = sum_j |v_jd| / sum_j exp(s_j - max_j s_j). The terms:
// - P is rounded to the input type before the P V product (FlashAttention 2 and 3, cuDNN): each
//   weight within u_in relative: u_in m_d. (fp32 rungs do not round it; the bound still holds.)
// - fp32 accumulation of P V over Nkv terms: 2 Nkv u32 m_d, the tensor-core bound of hgemm's
//   family.cpp (exact products, blocks added with truncation); the row sum l = sum_j p_j of
//   positive terms: Nkv u32 relative, and o = (sum_j p_j v_j) / l carries it: Nkv u32 m_d.
// - exp by ex2.approx (2 ulp) on each p_j, its argument's rounding (|t| u32 relative, at most
//   u32 / e absolute after the multiply by p = e^-|t|), the scale and log2(e) products and the
//   final division: 16 u32 m_d together, generously.
// - the scores: s_j' = s_j + e_j with |e_j| <= eta a_j, a_j = scale sum_i |q_i k_ji|, eta =
//   2 D u32 (the tensor-core dot of D exact products, as hgemm) + 4 u32 (scale, log2(e),
//   roundings of s). Normalised weights move by at most exp(max e - min e) - 1 <=
//   expm1(2 eta A) relative: c1 = 2 eta. Large-magnitude rows (A in the hundreds) need it.
// - f16 only: p_j <= 1 falls into f16's subnormal range below 2^-14, where its rounding error is
//   absolute, up to 2^-25 per weight: c2 = 2^-25 (bf16's subnormals start at 2^-126: c2 = 0).
// - e4m3 inputs (FlashAttention 3's FP8 forward): P is rounded to e4m3 (u_in = 2^-4) for weights
//   of 2^-6 and above, and by up to half the subnormal step, 2^-10 absolute, below: c2 = 2^-10
//   (a rung that scales P by 2^8 first stays within both). The FP8 tensor cores' accumulation
//   (kFp8Step a k32 step): P V adds ceil(Nkv / 32) kFp8Step m_d, the scores' eta gains
//   (D / 32) kFp8Step, and the scales' products 1 u32 (on top of the fp32 terms above, which a
//   rung that accumulates in fp32 meets instead; a rung's second rounding of the scales'
//   product, and V's scale times 1 / l, are inside the 16 u32 allowance of the final products). The row sums come from the fp32 terms
//   before P is rounded (FlashAttention 3 and cuDNN), so lse takes only the scores' errors. This
//   worst case is loose (o's bound passes 1 x m_d from Nkv ~ 8k): for e4m3 the relative L2, a
//   statistic, is the check that catches a wrong rung (tests/cpu/test_attention.cpp).
// The fp64 reference reports magnitude_d = (c0 m_d + expm1(c1 A) m_d + c2 t_d) / c0, so that
// the harness's mtol * magnitude with mtol = c0 is the bound above.
struct ErrorModel {
  double c0 = 0, c1 = 0, c2 = 0;
};

// Score errors (relative to the row's score bound A): eta as above.
double score_eta(const Dims& s, DType t) {
  const double d = static_cast<double>(s.d);
  double eta = 2 * d * kU32 + 4 * kU32;
  if (t == DType::e4m3) eta += (d / 32) * kFp8Step + kU32;
  return eta;
}

ErrorModel error_model(const Problem& p) {
  const Dims s = dims_of(p);
  const double u_in = dtype_unit_roundoff(p.dtype);
  const double nkv = static_cast<double>(s.nkv);
  ErrorModel e;
  e.c0 = u_in + 3 * nkv * kU32 + 16 * kU32;
  if (p.dtype == DType::e4m3) e.c0 += std::ceil(nkv / 32) * kFp8Step;
  e.c1 = 2 * score_eta(s, p.dtype);
  e.c2 = p.dtype == DType::f16    ? std::ldexp(1.0, -25)
         : p.dtype == DType::e4m3 ? std::ldexp(1.0, -10)
                                  : 0.0;
  return e;
}

// The row's error magnitudes (error_model) from its fp64 reference.
void finish_row(const Problem& p, AttentionRowReference& rr, int64_t nvis, RowReference& out) {
  const int64_t d = dims_of(p).d;
  // nvis == 0: O = 0 and lse = log(0) = -inf (FlashAttention 3's convention), magnitudes 0.
  const ErrorModel em = error_model(p);
  const double score_term = nvis > 0 ? std::expm1(em.c1 * rr.score_bound) : 0.0;
  out.o = std::move(rr.o);
  out.magnitude.resize(static_cast<size_t>(d));
  for (int64_t i = 0; i < d; ++i)
    out.magnitude[i] =
        (em.c0 * rr.abs_mean[i] + score_term * rr.abs_mean[i] + em.c2 * rr.abs_sum[i]) / em.c0;
  out.lse = rr.lse;
  out.lse_magnitude = rr.score_bound;
}

// Query rows computed together: up to this many of one (batch, KV head).
constexpr int kRowBlock = 8;

// The fp64 reference of `count` query rows (flat ids r = (bi * nq + n) * hq + h) that share a
// batch and a KV head. Each key and value row is read and converted once for all of them, and
// their sums, independent, overlap (one row alone waits on every add of its own dot product).
// Each row's arithmetic is attention_row_reference's, term for term and in its order: the same
// bits. A row past its visible keys adds zeros (a weight 0 and an abs-sum mask 0), which leave
// its sums as they are (none of them is -0).
void reference_block(const Problem& p, const Buffers& b, const int64_t* rows, int count,
                     RowReference* out) {
  constexpr int R = kRowBlock;
  const Dims s = dims_of(p);
  const int64_t d = s.d, bi = rows[0] / (s.nq * s.hq), hk = rows[0] % s.hq / s.group();
  const double scale = s.scale();
  const double q_scale = input_scale(b, "q_scale"), k_scale = input_scale(b, "k_scale"),
               v_scale = input_scale(b, "v_scale");
  std::vector<double> row(static_cast<size_t>(d));
  std::vector<double> q(static_cast<size_t>(d * R), 0.0);  // (D, R)
  int64_t nvis[R] = {}, max_vis = 0;
  for (int r = 0; r < count; ++r) {
    const int64_t n = rows[r] / s.hq % s.nq;
    nvis[r] = s.visible_keys(n);
    max_vis = std::max(max_vis, nvis[r]);
    load_row(b["q"], rows[r], d, row.data(), q_scale);
    for (int64_t i = 0; i < d; ++i) q[i * R + r] = row[i];
  }
  const Tensor &kt = b["k"], &vt = b["v"];
  auto kv_row = [&](int64_t j) { return (bi * s.nkv + j) * s.hkv + hk; };
  std::vector<double> p_rows(static_cast<size_t>(max_vis * R), 0.0);  // (keys, R): scores, then p
  double mx[R], amax[R] = {}, l[R] = {};
  std::fill(mx, mx + R, -std::numeric_limits<double>::infinity());
  for (int64_t j = 0; j < max_vis; ++j) {
    load_row(kt, kv_row(j), d, row.data(), k_scale);
    double dot[R] = {}, mag[R] = {};
    for (int64_t i = 0; i < d; ++i)
      for (int r = 0; r < R; ++r) {
        const double t = q[i * R + r] * row[i];
        dot[r] += t;
        mag[r] += std::fabs(t);
      }
    for (int r = 0; r < R; ++r)
      if (j < nvis[r]) {
        p_rows[j * R + r] = scale * dot[r];
        mx[r] = std::max(mx[r], p_rows[j * R + r]);
        amax[r] = std::max(amax[r], scale * mag[r]);
      }
  }
  for (int64_t j = 0; j < max_vis; ++j)  // safe softmax: the maximum subtracted before exp
    for (int r = 0; r < R; ++r)
      if (j < nvis[r]) l[r] += (p_rows[j * R + r] = std::exp(p_rows[j * R + r] - mx[r]));
  // (D, R) each: the sums of o, of the weighted |v| and of |v|.
  std::vector<double> acc(static_cast<size_t>(3 * d * R), 0.0);
  double* o = acc.data();
  double* abs_mean = o + d * R;
  double* abs_sum = abs_mean + d * R;
  for (int64_t j = 0; j < max_vis; ++j) {
    load_row(vt, kv_row(j), d, row.data(), v_scale);
    double w[R], seen[R];
    for (int r = 0; r < R; ++r) {
      w[r] = p_rows[j * R + r];  // 0 past the row's visible keys
      seen[r] = j < nvis[r] ? 1.0 : 0.0;
    }
    for (int64_t i = 0; i < d; ++i) {
      const double v = row[i], av = std::fabs(v);
      for (int r = 0; r < R; ++r) {
        o[i * R + r] += w[r] * v;
        abs_mean[i * R + r] += w[r] * av;
        abs_sum[i * R + r] += seen[r] * av;
      }
    }
  }
  for (int r = 0; r < count; ++r) {
    AttentionRowReference rr;
    rr.o.assign(static_cast<size_t>(d), 0.0);
    rr.abs_mean.assign(rr.o.size(), 0.0);
    rr.abs_sum.assign(rr.o.size(), 0.0);
    if (nvis[r] == 0) {  // no key: O = 0 and lse = log(0) = -inf
      rr.lse = -std::numeric_limits<double>::infinity();
      rr.score_bound = 0;
    } else {
      for (int64_t i = 0; i < d; ++i) {
        rr.o[i] = o[i * R + r] / l[r];
        rr.abs_mean[i] = abs_mean[i * R + r] / l[r];
        rr.abs_sum[i] = abs_sum[i * R + r] / l[r];
      }
      rr.lse = mx[r] + std::log(l[r]);
      rr.score_bound = amax[r];
    }
    finish_row(p, rr, nvis[r], out[r]);
  }
}

// The fp64 reference of the listed rows (flat query-row ids r = (bi * nq + n) * hq + h), each
// computed once, in parallel blocks of rows sharing a (batch, KV head), in query order (so that
// a block's rows see similar numbers of keys): the shared core of the whole and the sampled
// references.
void reference_rows(const Problem& p, const Buffers& b, const std::vector<int64_t>& rows,
                    std::vector<RowReference>& out) {
  const Dims s = dims_of(p);
  auto group_of = [&](int64_t r) { return r / (s.nq * s.hq) * s.hkv + r % s.hq / s.group(); };
  auto n_of = [&](int64_t r) { return r / s.hq % s.nq; };
  std::vector<int64_t> order(rows.begin(), rows.end());
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return std::pair(group_of(x), n_of(x)) < std::pair(group_of(y), n_of(y));
  });
  std::vector<size_t> starts;  // each block's first position in `order`
  for (size_t i = 0; i < order.size(); ++i)
    if (starts.empty() || i - starts.back() == kRowBlock ||
        group_of(order[i]) != group_of(order[starts.back()]))
      starts.push_back(i);
  starts.push_back(order.size());
  out.resize(rows.size());
#pragma omp parallel
  {
    std::vector<RowReference> block(kRowBlock);
    const int64_t blocks = static_cast<int64_t>(starts.size()) - 1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t k = 0; k < blocks; ++k) {
      const int count = static_cast<int>(starts[k + 1] - starts[k]);
      reference_block(p, b, order.data() + starts[k], count, block.data());
      for (int r = 0; r < count; ++r)
        out[row_position(rows, order[starts[k] + r])] = std::move(block[r]);
    }
  }
}

// Tensors' element counts.
int64_t qo_numel(const Dims& s) { return checked_product({s.b, s.nq, s.hq, s.d}, "attention q"); }
int64_t kv_numel(const Dims& s) { return checked_product({s.b, s.nkv, s.hkv, s.d}, "attention k"); }

// An e4m3 problem's scale of q, k or v: 2^(-2 + 2 u), u uniform in [0, 1) from the seed (their
// product stays at most 1, so that the scores are no larger than a bf16 problem's), times amp for
// q and k (amp > 1 scales the scales, not the e4m3 values, which it could saturate).
void build_input_scale(Tensor& t, double amp, uint64_t seed) {
  const double u =
      static_cast<double>(splitmix64(seed) >> 11) / static_cast<double>(uint64_t(1) << 53);
  store_from_double(t.host.data(), DType::f32, 0,
                    static_cast<float>(std::exp2(-2.0 + 2.0 * u) * amp));
}

// Q and K of a problem with amp > 1: N(0, amp^2), the power-of-two scaling exact in bf16/f16.
// (A build step does not see the run's distribution; V follows it.)
void build_amplified(Tensor& t, int64_t amp, uint64_t seed) {
  fill_random(t.host.data(), t.spec.dtype, t.spec.numel, Dist::normal, seed);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t.spec.numel; ++i)
    store_from_double(t.host.data(), t.spec.dtype, i, static_cast<double>(amp) * t.host_at(i));
}

std::vector<Problem> headline() {
  std::vector<Problem> v;
  auto add = [&](int64_t n, int64_t d, bool causal, DType t = DType::bf16) {
    v.push_back(problem(Dims::of(32768 / n, n, n, 32, 32, d, causal), t));  // B * N = 32k
  };
  // Issue 14's goals: causal D = 128 at N = 4k..32k; non-causal at 8k; D = 64 and 256 at 8k,
  // causal and not; one f16 shape; e4m3 at 8k.
  for (int64_t n : {4096, 8192, 16384, 32768}) add(n, 128, true);
  add(8192, 128, false);
  for (int64_t d : {64, 256})
    for (bool causal : {true, false}) add(8192, d, causal);
  add(8192, 128, true, DType::f16);
  // The FP8 forward (e4m3 inputs, bf16 O) at the bf16 goal's shapes, causal and not.
  for (bool causal : {true, false}) add(8192, 128, causal, DType::e4m3);
  return v;
}

// Shapes that break careless kernels: lengths off every tile (1, 17, 127, 129, 1000), one query
// against a long KV, Nq != Nkv under the causal mask both ways (Nq > Nkv leaves the first
// Nq - Nkv rows empty: O = 0, lse = -inf), group sizes 1, 4, 5, 6, 8, every D, many (batch,
// head) pairs with short rows, large-magnitude scores, a misaligned base, f16, several ragged
// wide (160- and 192-key) blocks, e4m3 inputs.
std::vector<Problem> awkward() {
  std::vector<Problem> v;
  auto add = [&](int64_t b, int64_t nq, int64_t nkv, int64_t hq, int64_t hkv, int64_t d,
                 bool causal, DType t = DType::bf16, int64_t amp = 1, int64_t misalign = 0) {
    v.push_back(problem(Dims::of(b, nq, nkv, hq, hkv, d, causal, amp), t, misalign));
  };
  const int64_t ds[] = {64, 128, 256};
  int i = 0;
  for (int64_t n : {1, 17, 127, 129, 1000}) {
    for (bool causal : {false, true}) add(2, n, n, 4, 2, ds[i % 3], causal);
    ++i;
  }
  for (bool causal : {false, true}) add(1, 1, 8192, 8, 2, 128, causal);  // decode-like
  add(2, 127, 300, 4, 1, 64, true);    // Nq < Nkv: every row sees the first 173 keys and more
  add(2, 300, 127, 4, 1, 128, true);   // Nq > Nkv: rows 0..172 empty
  add(1, 1000, 1, 2, 2, 64, true);     // one key: every row but the last empty
  add(1, 129, 1000, 2, 1, 256, true);  // a short query block at the end of a long KV
  // Row 0 sees keys 0..127 only: nothing in the first block visited (key 128), then a whole
  // block while its max is still -inf (v24's unseen-row case), at D = 64 and 128.
  for (int64_t d : {64, 128}) add(2, 2, 129, 4, 2, d, true);
  // Group sizes 1, 4, 5, 6, 8 (Hq / Hkv).
  for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{3, 3}, {8, 2}, {5, 1}, {12, 2}, {16, 2}})
    add(1, 129, 129, hq, hkv, 128, true);
  add(64, 16, 16, 64, 8, 128, true);   // B * H = 4096 (b, h) pairs of 16 tokens
  add(32, 33, 33, 32, 32, 64, false);  // 1024 pairs of 33 tokens
  for (bool causal : {false, true}) add(1, 257, 257, 4, 2, 128, causal, DType::bf16, 8);
  add(1, 129, 129, 4, 4, 64, false, DType::bf16, 1, 1);  // every base 2 bytes off
  for (bool causal : {false, true}) add(2, 129, 129, 4, 2, 128, causal, DType::f16);
  add(1, 300, 127, 4, 1, 64, true, DType::f16);
  add(1, 257, 257, 2, 1, 256, true, DType::f16, 8);
  // Several 160- or 192-key blocks at non-causal D = 64 (v11's) with ragged ends: Nq != Nkv, the
  // large-magnitude path, f16.
  add(2, 300, 1000, 4, 1, 64, false);
  add(1, 400, 400, 2, 1, 64, false, DType::bf16, 8);
  add(1, 200, 577, 2, 2, 64, false, DType::f16);
  // e4m3 inputs with their scales (bf16 O): both masks, every D, empty rows, large magnitudes.
  for (bool causal : {false, true}) add(2, 129, 129, 4, 2, 128, causal, DType::e4m3);
  add(1, 1000, 1000, 2, 1, 64, false, DType::e4m3);
  add(2, 17, 17, 4, 2, 256, false, DType::e4m3);
  add(1, 300, 127, 4, 1, 128, true, DType::e4m3);  // rows 0..172 empty
  add(1, 257, 257, 2, 1, 128, true, DType::e4m3, 8);
  // Larger than the whole reference: judged by sampled rows.
  add(1, 4096, 4096, 16, 4, 128, true);
  return v;
}

}  // namespace

Dims dims_of(const Problem& p) {
  return Dims::of(p.dim("b"), p.dim("nq"), p.dim("nkv"), p.dim("hq"), p.dim("hkv"), p.dim("d"),
                  p.dim("causal") != 0, p.dim("amp"));
}

Problem problem(const Dims& s, DType t, int64_t misalign) {
  Problem p;
  p.family = "attention";
  p.shape.dims = {{"b", s.b},
                  {"nq", s.nq},
                  {"nkv", s.nkv},
                  {"hq", s.hq},
                  {"hkv", s.hkv},
                  {"d", s.d},
                  {"causal", s.causal ? 1 : 0},
                  {"amp", s.amp}};
  p.dtype = t;
  p.misalign = misalign;
  return p;
}

// FlashAttention's benchmarks count a causal forward as 4 B H Nq D avg_seqlen with avg_seqlen =
// (max(0, Nkv - Nq) + Nkv) / 2: for Nq <= Nkv the continuous area of the visible trapezoid,
// Nq Nkv - Nq^2 / 2, and at Nq = Nkv exactly half of the non-causal count. For Nq > Nkv their
// formula gives Nq Nkv / 2, which counts the empty rows' area; the visible region is the
// triangle of the last Nkv rows, Nkv^2 / 2, and that is counted here (minimal work).
double visible_pairs(const Dims& s) {
  const double nq = static_cast<double>(s.nq), nkv = static_cast<double>(s.nkv);
  if (!s.causal) return nq * nkv;
  return s.nq <= s.nkv ? nq * nkv - nq * nq / 2 : nkv * nkv / 2;
}

// One row alone, the arithmetic of attention_row_reference (reference_rows computes the same
// bits in blocks of rows).
void reference_row(const Problem& p, const float* q, const float* k, const float* v, int64_t bi,
                   int64_t n, int64_t h, RowReference& out) {
  const Dims s = dims_of(p);
  const int64_t d = s.d, hk = h / s.group(), nvis = s.visible_keys(n);
  const float* qr = q + ((bi * s.nq + n) * s.hq + h) * d;
  const std::vector<double> qd(qr, qr + d);
  // Key or value j of this row's KV head, as doubles (exact: the inputs are bf16/f16 values).
  auto row_of = [&](const float* base) {
    return [&, base](int64_t j, double* row) {
      const float* r = base + ((bi * s.nkv + j) * s.hkv + hk) * d;
      for (int64_t i = 0; i < d; ++i) row[i] = r[i];
    };
  };
  AttentionRowReference rr;
  std::vector<double> scores;
  attention_row_reference(qd.data(), d, s.scale(), nvis, row_of(k), row_of(v), rr, scores);
  finish_row(p, rr, nvis, out);
}

void reference_all(const Problem& p, const Buffers& b, Reference& ref) {
  const Dims s = dims_of(p);
  std::vector<int64_t> rows(static_cast<size_t>(s.rows()));
  for (int64_t r = 0; r < s.rows(); ++r) rows[r] = r;
  std::vector<RowReference> rr;
  reference_rows(p, b, rows, rr);
  RefOutput& o = ref["o"];
  RefOutput& lse = ref["lse"];
  o.value.resize(static_cast<size_t>(s.rows() * s.d));
  o.magnitude.resize(o.value.size());
  lse.value.resize(static_cast<size_t>(s.rows()));
  lse.magnitude.resize(lse.value.size());
  for (int64_t r = 0; r < s.rows(); ++r) {
    std::copy(rr[r].o.begin(), rr[r].o.end(), o.value.begin() + r * s.d);
    std::copy(rr[r].magnitude.begin(), rr[r].magnitude.end(), o.magnitude.begin() + r * s.d);
    const int64_t bi = r / (s.nq * s.hq), n = (r / s.hq) % s.nq, h = r % s.hq;
    const int64_t li = (bi * s.hq + h) * s.nq + n;  // lse is (B, Hq, Nq)
    lse.value[li] = rr[r].lse;
    lse.magnitude[li] = rr[r].lse_magnitude;
  }
}

Family make_attention() {
  Family f;
  f.name = "attention";
  f.summary =
      "O = softmax(Q K^T / sqrt(D), causal optional) V and its log-sum-exp; (B, N, H, D), GQA, "
      "bf16/f16, fp32 accumulation; or e4m3 Q, K, V with per-tensor scales and bf16 O";
  f.dims = {"b", "nq", "nkv", "hq", "hkv", "d", "causal", "amp"};
  f.zero_ok_dims = {"causal"};
  f.default_dims = {{"causal", 0}, {"amp", 1}};  // not causal, inputs of unit scale
  f.dtypes = {DType::bf16, DType::f16, DType::e4m3};
  f.ceiling = "bf16_tc";
  f.ceiling_of = [](const Problem& p) {
    return p.dtype == DType::e4m3 ? std::string("fp8_tc") : std::string("bf16_tc");
  };
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    const Dims s = dims_of(p);
    if (s.hq % s.hkv != 0)
      throw UsageError("attention: hq (" + std::to_string(s.hq) + ") must be a multiple of hkv (" +
                       std::to_string(s.hkv) + ")");
    if (p.dim("causal") > 1) throw UsageError("attention: causal must be 0 or 1");
    if ((s.amp & (s.amp - 1)) != 0 || s.amp > 1024)
      throw UsageError("attention: amp must be a power of two up to 1024 (an exact scaling)");
  };
  f.tensors = [](const Problem& p) {
    const Dims s = dims_of(p);
    std::vector<TensorSpec> t{
        {"q", p.dtype, qo_numel(s), Role::input},
        {"k", p.dtype, kv_numel(s), Role::input},
        {"v", p.dtype, kv_numel(s), Role::input},
        {"o", output_dtype(p.dtype), qo_numel(s), Role::output},
        {"lse", DType::f32, checked_product({s.b, s.hq, s.nq}, "attention lse"), Role::output}};
    if (p.dtype == DType::e4m3) {
      for (const char* name : {"q_scale", "k_scale", "v_scale"}) {
        TensorSpec scale{name, DType::f32, 1, Role::input};
        const double amp = name[0] == 'v' ? 1.0 : static_cast<double>(s.amp);
        scale.build = [amp](const Buffers&, Tensor& x, uint64_t seed) {
          build_input_scale(x, amp, seed);
        };
        t.push_back(scale);
      }
    } else if (s.amp > 1) {
      for (int i : {0, 1})
        t[i].build = [amp = s.amp](const Buffers&, Tensor& x, uint64_t seed) {
          build_amplified(x, amp, seed);
        };
    }
    return t;
  };
  f.reference = reference_all;
  // 4 flops per visible (query, key) pair and head dimension: 2 for the score's multiply-add,
  // 2 for P V's (FlashAttention's count; exp and the rescales not counted). Bytes: Q, K, V read
  // once, O and lse written once (an e4m3 problem's O in bf16, and its three scales read).
  f.counts = [](const Problem& p) {
    const Dims s = dims_of(p);
    const double flops = 4 * static_cast<double>(s.b) * static_cast<double>(s.hq) *
                         static_cast<double>(s.d) * visible_pairs(s);
    const double es = static_cast<double>(dtype_size(p.dtype));
    const double os = static_cast<double>(dtype_size(output_dtype(p.dtype)));
    const double bytes =
        static_cast<double>(qo_numel(s)) * (es + os) + 2.0 * static_cast<double>(kv_numel(s)) * es +
        4.0 * static_cast<double>(s.b * s.hq * s.nq) + (p.dtype == DType::e4m3 ? 3 * 4.0 : 0.0);
    return Counts{flops, bytes};
  };

  // o: the bound of error_model() through the magnitudes (mtol = c0), the output's own rounding
  // (rtol = u_out) and half the output type's smallest subnormal (atol). lse (fp32): the score
  // errors eta A (magnitude A, mtol = eta + u32 for the final m scale product), the row sum's
  // Nkv u32 relative error and __logf's 2^-21.4 absolute error (atol), the fp32 rounding of lse
  // itself (rtol 2 u32).
  // Relative L2 (a statistic: rounding errors of random sign, RMS u / sqrt(3) each): o's
  // rounding and P's, u_out + u_in (for e4m3 inputs: 2^-8 + 2^-4: P's rounding, ~u_in / sqrt(3)
  // relative whatever Nkv, since o shrinks as the same sqrt(N_eff) as its error; a lost KV block
  // of 1 / n of the keys moves o by ~sqrt(1 / n): caught at the awkward shapes' lengths, not at
  // n = 64 blocks, where the e4m3 tolerance is ~0.17), the
  // accumulations 4 sqrt(Nkv) u32, and the scores' share,
  // 4 sqrt(D) u32 times a row's typical score bound: scale sum_i |q_i k_i| ~ sqrt(D) amp^2 E|xy|
  // (E|xy| <= 1.21 for the harness's distributions; 2 leaves room for the maximum over keys),
  // 8 D u32 amp^2 in all. lse's errors are absolute (the same terms); its RMS over rows is at
  // least ~1/3 (the scores of uniform inputs have a standard deviation of 1/3), hence the 3.
  // A wrong mask or a lost KV tile moves o by percents at the small shapes, far above these.
  f.output_tolerance = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    const double nkv = static_cast<double>(s.nkv), d = static_cast<double>(s.d);
    const double amp2 = static_cast<double>(s.amp * s.amp);
    const bool e4m3 = p.dtype == DType::e4m3;
    // e4m3: the FP8 accumulation's share, its 33 truncations a k32 step of RMS up to
    // 2^-13 / sqrt(3) each: sqrt(11 D / 32) kFp8Acc a score and sqrt(11 ceil(Nkv / 32)) kFp8Acc
    // for P V, in the same form (the scales' product is at most amp^2).
    const double scores_l2 =
        8 * d * kU32 * amp2 + (e4m3 ? 8 * std::sqrt(d * 11 * d / 32) * kFp8Acc * amp2 : 0.0);
    const double acc_l2 = 4 * std::sqrt(nkv) * kU32 +
                          (e4m3 ? 4 * std::sqrt(11 * std::ceil(nkv / 32)) * kFp8Acc : 0.0);
    if (output == "lse") {
      const double abs_err = nkv * kU32 + std::ldexp(1.0, -20);
      const double l2 = 3 * (4 * std::sqrt(nkv) * kU32 + std::ldexp(1.0, -20) + scores_l2);
      return Tolerance{abs_err, 2 * kU32, score_eta(s, p.dtype) + kU32, l2 + 4 * kU32};
    }
    const DType out = output_dtype(p.dtype);
    const double u_out = dtype_unit_roundoff(out), u_in = dtype_unit_roundoff(p.dtype);
    const double atol = out == DType::f16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134);
    return Tolerance{atol, u_out, error_model(p).c0, u_out + u_in + acc_l2 + scores_l2};
  };
  f.tolerance = [f_tol = f.output_tolerance](const Problem& p) { return f_tol(p, "o"); };

  // Sampled at large sizes, by query rows: o as (B Nq Hq) rows of D (a grid row is one query
  // row), lse as (B Hq) rows of Nq (a grid column is one query position). The harness's sample
  // then holds the first and last query rows of the whole output, the rows of the last query
  // tiles of every sampled (batch, head) (lse's last-tile columns, for tiles of 8 to 256), every
  // row's first and last elements over an even spread of rows, and uniform elements; each query
  // row it touches is computed once, whole.
  f.cpu_reference_max_flops = kCpuReferenceMaxFlops;
  f.output_grid = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    return output == "lse" ? OutputGrid{s.b * s.hq, s.nq} : OutputGrid{s.rows(), s.d};
  };
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string& output,
                      const std::vector<int64_t>& index, RefOutput& out) {
    const Dims s = dims_of(p);
    const bool lse = output == "lse";
    // The query row (b, n, h) of each sampled element, as a flat row id (b * nq + n) * hq + h.
    auto row_of = [&](int64_t e) {
      if (!lse) return e / s.d;
      const int64_t bh = e / s.nq, n = e % s.nq;
      return ((bh / s.hq) * s.nq + n) * s.hq + bh % s.hq;
    };
    const std::vector<int64_t> rows = sampled_rows(index, row_of);
    std::vector<RowReference> rr;
    reference_rows(p, b, rows, rr);
    out.value.resize(index.size());
    out.magnitude.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      const RowReference& r = rr[row_position(rows, row_of(index[i]))];
      out.value[i] = lse ? r.lse : r.o[index[i] % s.d];
      out.magnitude[i] = lse ? r.lse_magnitude : r.magnitude[index[i] % s.d];
    }
  };
  return f;
}

}  // namespace klab::attention

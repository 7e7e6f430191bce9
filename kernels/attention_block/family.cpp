// The attention_block family (family.hpp): problem, inputs, the fp64 reference of the whole block
// with each output's error bound carried through the steps, counts and tolerances.
#include "kernels/attention_block/family.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/add_rmsnorm_quant/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/reference_attention.hpp"

namespace klab::attention_block {

namespace {

constexpr double kU32 = 1.0 / (1 << 24);  // fp32 unit roundoff
constexpr double kUbf16 = 1.0 / 256;      // bf16 unit roundoff

int64_t int_at(const Tensor& t, int64_t i) { return static_cast<int64_t>(t.host_at(i)); }

Problem gemm_problem(int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.family = "hgemm";
  p.shape.dims = {{"m", m}, {"n", n}, {"k", k}};
  p.dtype = DType::bf16;
  return p;
}

// ---- The reference ----
//
// Each output's bound (its magnitude; the check's mtol = 1) is what the GPU's value may differ
// from the fp64 value by, carried step by step to first order, each step's own bound taken from
// its family (the GPU rungs' arithmetic) and the inputs' errors propagated through it:
// 1. h = bf16(fp32(x + residual)): the same bits on both sides (residual_out must match exactly).
//    y = RMSNorm(h) w, stored in bf16: |y' - y| <= e_y |y| (add_rmsnorm_quant::y_error_bound).
// 2. qkv_j = sum_k y_k W_kj, g_j = sum_k |y_k W_kj|: y's errors move it by <= e_y g_j, the fp32
//    accumulation by 2 K u32 g' (hgemm's bound, g' <= (1 + e_y) g), the bf16 store by u |.|:
//      E_j = (1 + u) (e_y + 2 K u32 (1 + e_y)) g_j + u |qkv_j|.
// 3. A q or k head x (D of qkv) is normalised, y_i = x_i w_i / rho, rho = sqrt(mean(x^2) + eps):
//    dy_i/dx_k = (w_i / rho) (delta_ik - x_i x_k / (D rho^2)), so the input errors E move y_i by
//      Y_i <= (|w_i| / rho) (E_i + |x_i| r),  r = sum_k |x_k| E_k / (D rho^2),
//    r being rho's relative move (times (1 + 2 r) for the second order). The rotation moves
//    pair (i, i + D/2) by at most Y_i + Y_{i+D/2}; with the rung's own bound for exact inputs
//    (qk_norm_rope_cache's reference_head: e = y_error_bound(D) + cos/sin + 4 u32):
//      F_i = u |out_i| + (1 + u) (e (|y_i| + |y_{i+D/2}|) + Y_i + Y_{i+D/2}).
//    v is qkv's slice, stored as it is: its bound is E.
// 4. Attention of q head h over the L keys (the pool's L - 1, exact, and the new k and v): the
//    scores move by at most D_s = scale max_j sum_i F^q_i |k_ji| over the pool's keys, and by
//    scale sum_i (|q_i| F^k_i + F^q_i |k_i| + F^q_i F^k_i) at the new key; the weights by at most
//    expm1(2 D_s) relative; the new value's errors weigh p_new e^(2 D_s). With the rung's own
//    bound for exact inputs (decode_attention's o_bound_factor c):
//      O_d = c m_d + (1 + u) (expm1(2 D_s) m_d + e^(2 D_s) p_new E^v_d),  m_d = sum_j p_j |v_jd|.
// 5. out_j = sum_k o_k Wo_kj: as 2 with o's errors O:
//      (1 + u) (sum_k O_k |Wo_kj| + 2 K' u32 sum_k (|o_k| + O_k) |Wo_kj|) + u |out_j|.

/// One token's reference: the outputs' values and bounds.
struct TokenReference {
  std::vector<double> h, qkv, qkv_bound, o, o_bound, out, out_bound;
};

/// Steps 1 and 2: h, y and qkv of token t.
void project(const Dims& s, const Buffers& b, int64_t t, TokenReference& r,
             std::vector<double>& y) {
  const Tensor &x = b["x"], &res = b["residual"], &w = b["norm_weight"], &wq = b["w_qkv"];
  const int64_t n = s.hidden, cols = s.qkv_cols();
  r.h.resize(static_cast<size_t>(n));
  y.resize(r.h.size());
  double sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float sum = static_cast<float>(x.host_at(t * n + i) + res.host_at(t * n + i));
    r.h[i] = bf16_bits_to_float(float_to_bf16_bits(sum));  // the rungs' fp32 add, then bf16
    sum_sq += r.h[i] * r.h[i];
  }
  const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + kEps);
  for (int64_t i = 0; i < n; ++i) y[i] = r.h[i] * inv_rms * w.host_at(i);
  r.qkv.assign(static_cast<size_t>(cols), 0.0);
  std::vector<double> g(static_cast<size_t>(cols), 0.0);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < cols; ++j) {
      const double term = y[k] * wq.host_at(k * cols + j);
      r.qkv[j] += term;
      g[j] += std::fabs(term);
    }
  const double e_y = add_rmsnorm_quant::y_error_bound(n);
  const double e = (1 + kUbf16) * (e_y + 2 * static_cast<double>(n) * kU32 * (1 + e_y));
  r.qkv_bound.resize(r.qkv.size());
  for (int64_t j = 0; j < cols; ++j) r.qkv_bound[j] = e * g[j] + kUbf16 * std::fabs(r.qkv[j]);
}

/// Step 3: head `head` (a q head, or Hq for the k head) of token t at position pos: its rotated
/// values and bounds F.
void norm_rope(const Dims& s, const Buffers& b, const TokenReference& r, int64_t head, double pos,
               std::vector<double>& out, std::vector<double>& bound) {
  const int64_t d = s.d, half = d / 2, base = head * d;
  const Tensor& w = b[head < s.hq ? "q_weight" : "k_weight"];
  double sum_sq = 0;
  for (int64_t i = 0; i < d; ++i) sum_sq += r.qkv[base + i] * r.qkv[base + i];
  const double rho2 = sum_sq / static_cast<double>(d) + kEps, rho = std::sqrt(rho2);
  double moved = 0;  // sum_k |x_k| E_k
  for (int64_t i = 0; i < d; ++i) moved += std::fabs(r.qkv[base + i]) * r.qkv_bound[base + i];
  const double rel = moved / (static_cast<double>(d) * rho2);
  std::vector<double> y(static_cast<size_t>(d)), dy(y.size());
  for (int64_t i = 0; i < d; ++i) {
    const double wi = w.host_at(i), xi = r.qkv[base + i];
    y[i] = xi * wi / rho;
    dy[i] = (1 + 2 * rel) * std::fabs(wi) / rho * (r.qkv_bound[base + i] + std::fabs(xi) * rel);
  }
  const double e =
      qk_norm_rope_cache::y_error_bound(d) + qk_norm_rope_cache::cos_sin_error_bound() + 4 * kU32;
  out.resize(static_cast<size_t>(d));
  bound.resize(out.size());
  for (int64_t i = 0; i < half; ++i) {
    const double angle =
        pos * std::pow(qk_norm_rope_cache::kTheta, -2.0 * static_cast<double>(i) / d);
    const double c = std::cos(angle), sn = std::sin(angle);
    out[i] = y[i] * c - y[i + half] * sn;
    out[i + half] = y[i + half] * c + y[i] * sn;
    const double pair =
        (1 + kUbf16) * (e * (std::fabs(y[i]) + std::fabs(y[i + half])) + dy[i] + dy[i + half]);
    bound[i] = kUbf16 * std::fabs(out[i]) + pair;
    bound[i + half] = kUbf16 * std::fabs(out[i + half]) + pair;
  }
}

/// Steps 3 to 5 for token t (sequence t): o and out, with their bounds.
void attend(const Dims& s, const Buffers& b, int64_t t, TokenReference& r) {
  const Tensor &kc = b["k_cache"], &vc = b["v_cache"], &table = b["block_table"];
  const int64_t d = s.d, len = int_at(b["seq_lens"], t), group = s.hq / s.hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d)), pos = static_cast<double>(len - 1);
  const int64_t cols = s.attn_cols(), pages_cols = (s.len + s.page - 1) / s.page;
  r.o.assign(static_cast<size_t>(cols), 0.0);
  r.o_bound.assign(r.o.size(), 0.0);
  std::vector<double> k_new, k_bound, q, q_bound, scratch;
  AttentionRowReference row;
  for (int64_t hk = 0; hk < s.hkv; ++hk) {
    norm_rope(s, b, r, s.hq + hk, pos, k_new, k_bound);
    const int64_t v_base = (s.hq + s.hkv + hk) * d;
    auto at = [&](int64_t j) {  // the pool's row of key j < len - 1, KV head hk (HND pages)
      const int64_t page = int_at(table, t * pages_cols + j / s.page);
      return ((page * s.hkv + hk) * s.page + j % s.page) * d;
    };
    for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
      norm_rope(s, b, r, h, pos, q, q_bound);
      double shift = 0;  // D_s
      auto key = [&](int64_t j, double* out) {
        double moved = 0;
        for (int64_t i = 0; i < d; ++i) {
          out[i] = j < len - 1 ? kc.host_at(at(j) + i) : k_new[i];
          moved += j < len - 1 ? q_bound[i] * std::fabs(out[i])
                               : std::fabs(q[i]) * k_bound[i] + q_bound[i] * std::fabs(out[i]) +
                                     q_bound[i] * k_bound[i];
        }
        shift = std::max(shift, scale * moved);
      };
      auto value = [&](int64_t j, double* out) {
        for (int64_t i = 0; i < d; ++i)
          out[i] = j < len - 1 ? vc.host_at(at(j) + i) : r.qkv[v_base + i];
      };
      attention_row_reference(q.data(), d, scale, len, key, value, row, scratch);
      double dot = 0;  // the new key's exact weight, exp(s_new - lse)
      for (int64_t i = 0; i < d; ++i) dot += q[i] * k_new[i];
      const double p_new = std::exp(scale * dot - row.lse);
      const double c = decode_attention::o_bound_factor(d, len, row.score_bound);
      for (int64_t i = 0; i < d; ++i) {
        r.o[h * d + i] = row.o[i];
        r.o_bound[h * d + i] =
            c * row.abs_mean[i] +
            (1 + kUbf16) * (std::expm1(2 * shift) * row.abs_mean[i] +
                            std::exp(2 * shift) * p_new * r.qkv_bound[v_base + i]);
      }
    }
  }
  const Tensor& wo = b["w_o"];
  const int64_t n = s.hidden;
  r.out.assign(static_cast<size_t>(n), 0.0);
  std::vector<double> moved(r.out.size(), 0.0), g(r.out.size(), 0.0);
  for (int64_t k = 0; k < cols; ++k)
    for (int64_t j = 0; j < n; ++j) {
      const double wkj = wo.host_at(k * n + j);
      r.out[j] += r.o[k] * wkj;
      moved[j] += r.o_bound[k] * std::fabs(wkj);
      g[j] += (std::fabs(r.o[k]) + r.o_bound[k]) * std::fabs(wkj);
    }
  r.out_bound.resize(r.out.size());
  for (int64_t j = 0; j < n; ++j)
    r.out_bound[j] = (1 + kUbf16) * (moved[j] + 2 * static_cast<double>(cols) * kU32 * g[j]) +
                     kUbf16 * std::fabs(r.out[j]);
}

std::vector<Problem> headline() {
  std::vector<Problem> out;
  for (auto [b, len] : {std::pair<int64_t, int64_t>{1, 4096}, {16, 8192}, {64, 4096}}) {
    Dims s;
    s.b = b;
    s.len = len;
    out.push_back(problem(s));
  }
  return out;
}

std::vector<Problem> awkward() {
  std::vector<Problem> out;
  auto add = [&](int64_t b, int64_t len, int64_t min_len, int64_t page, int64_t hidden, int64_t hq,
                 int64_t hkv, int64_t d) {
    Dims s{b, len, min_len, page, hidden, hq, hkv, d};
    out.push_back(problem(s));
  };
  add(3, 17, 0, 16, 4096, 32, 8, 128);   // the new token opens a second page
  add(5, 1000, 1, 32, 512, 4, 2, 128);   // ragged, one sequence whose only key is the new one
  add(2, 64, 0, 64, 1024, 16, 2, 64);    // D = 64, a group of 8, the new token ends a page
  add(4, 300, 100, 16, 768, 6, 1, 128);  // a group of 6, hidden not a power of two
  return out;
}

}  // namespace

decode_attention::Dims Dims::attention() const {
  return decode_attention::Dims::of(b, len, page, hq, hkv, d, min_len);
}

qk_norm_rope_cache::Dims Dims::qk() const {
  return {.tokens = b, .hq = hq, .hkv = hkv, .d = d, .page = page, .seqs = b, .context = len};
}

Problem Dims::qkv_gemm() const { return gemm_problem(b, qkv_cols(), hidden); }
Problem Dims::o_gemm() const { return gemm_problem(b, hidden, attn_cols()); }

Dims dims_of(const Problem& p) {
  Dims s{p.dim("b"),      p.dim("len"), p.dim("min_len"), p.dim("page"),
         p.dim("hidden"), p.dim("hq"),  p.dim("hkv"),     p.dim("d")};
  if (s.min_len == 0) s.min_len = s.len;
  return s;
}

Problem problem(const Dims& s) {
  Problem p;
  p.family = "attention_block";
  p.shape.dims = {{"b", s.b},
                  {"len", s.len},
                  {"min_len", s.min_len == s.len ? 0 : s.min_len},
                  {"page", s.page},
                  {"hidden", s.hidden},
                  {"hq", s.hq},
                  {"hkv", s.hkv},
                  {"d", s.d}};
  p.dtype = DType::bf16;
  return p;
}

void build_positions(const Tensor& seq_lens, Tensor& positions) {
  for (int64_t i = 0; i < positions.spec.numel; ++i)
    store_from_double(positions.host.data(), DType::i32, i,
                      static_cast<double>(int_at(seq_lens, i) - 1));
}

void build_slot_mapping(const Dims& s, const Tensor& seq_lens, const Tensor& block_table,
                        Tensor& slots) {
  const int64_t cols = (s.len + s.page - 1) / s.page;
  for (int64_t i = 0; i < s.b; ++i) {
    const int64_t pos = int_at(seq_lens, i) - 1;
    const int64_t page = int_at(block_table, i * cols + pos / s.page);
    KLAB_CHECK(page >= 0, "attention_block: the new token's page is not in the block table");
    store_from_double(slots.host.data(), DType::i64, i,
                      static_cast<double>(page * s.page + pos % s.page));
  }
}

void build_weight(int64_t k, Tensor& w, uint64_t seed) {
  fill_random(w.host.data(), DType::bf16, w.spec.numel, Dist::normal, seed);
  const double scale = std::ldexp(1.0, -static_cast<int>(std::lround(0.5 * std::log2(k))));
  for (int64_t i = 0; i < w.spec.numel; ++i)
    store_from_double(w.host.data(), DType::bf16, i, w.host_at(i) * scale);  // exact: 2^-n
}

void build_pool(const Dims& s, const Tensor& slots, Tensor& pool, uint64_t seed) {
  fill_random(pool.host.data(), DType::bf16, pool.spec.numel, Dist::normal, seed);
  auto* bits = reinterpret_cast<uint16_t*>(pool.host.data());
  for (int64_t i = 0; i < s.b; ++i)
    for (int64_t h = 0; h < s.hkv; ++h) {
      const int64_t at = qk_norm_rope_cache::pool_offset(int_at(slots, i), h, s.hkv, s.page, s.d);
      std::fill(bits + at, bits + at + s.d, kStaleBits);
    }
}

Family make_attention_block() {
  Family f;
  f.name = "attention_block";
  f.summary =
      "one decoder layer's attention block at decode: norm, QKV GEMM, QK-norm + rope + cache "
      "write, paged decode attention, output projection (B sequences, one new token each)";
  f.dims = {"b", "len", "min_len", "page", "hidden", "hq", "hkv", "d"};
  f.zero_ok_dims = {"min_len"};
  f.default_dims = {{"min_len", 0}, {"page", 16}, {"hidden", 4096},
                    {"hq", 32},     {"hkv", 8},   {"d", 128}};
  f.dtypes = {DType::bf16};
  // At decode the block streams its weights and the KV cache: a read-bound mix.
  f.ceiling = "read";
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    const Dims s = dims_of(p);
    auto fail = [](const std::string& why) { throw UsageError("attention_block: " + why); };
    if (s.min_len < 1 || s.min_len > s.len)
      fail("min_len must be between 1 and len (each sequence holds its new token), or 0");
    if (s.hidden % 8 != 0) fail("hidden must be a multiple of 8");
    if (s.b > (int64_t(1) << 20) || s.len > (int64_t(1) << 20))
      fail("b and len must be at most 2^20");
    decode_attention::make_decode_attention().validate(decode_attention::problem(s.attention()));
    qk_norm_rope_cache::make_qk_norm_rope_cache().validate(qk_norm_rope_cache::problem(s.qk()));
  };
  f.tensors = [](const Problem& p) {
    const Dims s = dims_of(p);
    // decode_attention's lengths, block table and pool, built by its own builders.
    const decode_attention::Dims a = s.attention();
    const int64_t pool = checked_product({decode_attention::pool_pages(a), s.hkv, s.page, s.d},
                                         "attention_block kv cache");
    TensorSpec lens{"seq_lens", DType::i32, s.b, Role::input};
    lens.build = [a](const Buffers&, Tensor& t, uint64_t seed) {
      decode_attention::build_seq_lens(a, t, seed);
    };
    TensorSpec table{"block_table", DType::i32, s.b * a.max_pages(), Role::input};
    table.build = [a](const Buffers& b, Tensor& t, uint64_t seed) {
      decode_attention::build_block_table(a, b["seq_lens"], t, seed);
    };
    TensorSpec positions{"positions", DType::i32, s.b, Role::input};
    positions.build = [](const Buffers& b, Tensor& t, uint64_t) {
      build_positions(b["seq_lens"], t);
    };
    TensorSpec slots{"slot_mapping", DType::i64, s.b, Role::input};
    slots.build = [s](const Buffers& b, Tensor& t, uint64_t) {
      build_slot_mapping(s, b["seq_lens"], b["block_table"], t);
    };
    TensorSpec w_qkv{"w_qkv", DType::bf16, checked_product({s.hidden, s.qkv_cols()}, "w_qkv"),
                     Role::input};
    w_qkv.build = [s](const Buffers&, Tensor& t, uint64_t seed) {
      build_weight(s.hidden, t, seed);
    };
    TensorSpec w_o{"w_o", DType::bf16, checked_product({s.attn_cols(), s.hidden}, "w_o"),
                   Role::input};
    w_o.build = [s](const Buffers&, Tensor& t, uint64_t seed) {
      build_weight(s.attn_cols(), t, seed);
    };
    std::vector<TensorSpec> specs{{"x", DType::bf16, s.b * s.hidden, Role::input},
                                  {"residual", DType::bf16, s.b * s.hidden, Role::input},
                                  {"norm_weight", DType::bf16, s.hidden, Role::input},
                                  w_qkv,
                                  {"q_weight", DType::bf16, s.d, Role::input},
                                  {"k_weight", DType::bf16, s.d, Role::input},
                                  w_o,
                                  lens,
                                  table,
                                  positions,
                                  slots};
    for (const char* name : {"k_cache", "v_cache"}) {
      TensorSpec cache{name, DType::bf16, pool, Role::input};
      cache.build = [s](const Buffers& b, Tensor& t, uint64_t seed) {
        build_pool(s, b["slot_mapping"], t, seed);
      };
      specs.push_back(cache);
    }
    specs.push_back({"residual_out", DType::bf16, s.b * s.hidden, Role::output});
    specs.push_back({"qkv", DType::bf16, s.b * s.qkv_cols(), Role::output});
    specs.push_back({"o", DType::bf16, s.b * s.attn_cols(), Role::output});
    specs.push_back({"out", DType::bf16, s.b * s.hidden, Role::output});
    return specs;
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const Dims s = dims_of(p);
    std::vector<TokenReference> tokens(static_cast<size_t>(s.b));
#pragma omp parallel
    {
      std::vector<double> y;
#pragma omp for schedule(dynamic, 1)
      for (int64_t t = 0; t < s.b; ++t) {
        project(s, b, t, tokens[t], y);
        attend(s, b, t, tokens[t]);
      }
    }
    auto gather = [&](const char* name, std::vector<double> TokenReference::*value,
                      std::vector<double> TokenReference::*bound) {
      RefOutput& o = ref[name];
      for (const TokenReference& r : tokens) {
        o.value.insert(o.value.end(), (r.*value).begin(), (r.*value).end());
        if (bound) o.magnitude.insert(o.magnitude.end(), (r.*bound).begin(), (r.*bound).end());
      }
    };
    gather("residual_out", &TokenReference::h, nullptr);
    gather("qkv", &TokenReference::qkv, &TokenReference::qkv_bound);
    gather("o", &TokenReference::o, &TokenReference::o_bound);
    gather("out", &TokenReference::out, &TokenReference::out_bound);
  };
  // Flops: the two projections, the attention (FlashAttention's 4 per key and head dimension)
  // and the norms (the families' 7 per element). Bytes, the least a block moves: the weights,
  // the KV cache it attends to, the activations in and out, the lengths, positions, slots and
  // block table.
  f.counts = [](const Problem& p) {
    const Dims s = dims_of(p);
    const double b = static_cast<double>(s.b), h = static_cast<double>(s.hidden);
    const double qkv = static_cast<double>(s.qkv_cols()), attn = static_cast<double>(s.attn_cols());
    double keys = 0;
    for (int64_t l : decode_attention::context_lengths(s.attention()))
      keys += static_cast<double>(l);
    const double d = static_cast<double>(s.d), hkv = static_cast<double>(s.hkv);
    const double flops = 2 * b * h * qkv + 2 * b * attn * h + 4 * keys * attn +
                         7 * b * (h + static_cast<double>(s.hq + s.hkv) * d);
    const double weights = h * qkv + attn * h + h + 2 * d;
    const double activations = b * (4 * h + qkv + attn);  // x, residual, residual_out, out; qkv, o
    const double bytes = 2 * (weights + activations + 2 * keys * hkv * d) +
                         4.0 * static_cast<double>(s.b * (2 + s.attention().max_pages())) + 8 * b;
    return Counts{flops, bytes};
  };
  // residual_out: exact (the same fp32 add and bf16 rounding on both sides). The others: the
  // carried bounds (above) as each element's magnitude, mtol = 1. Those are worst cases: past
  // the QKV projection, whose errors are sums of K roundings of random sign (~sqrt(K) below
  // their bound), they admit errors as large as o's own cancelling sums, and catch only gross
  // faults there. The relative L2 is the tight test. Each step adds about one unit, e_y + u
  // (y's bf16 store and the norm, then the projection's own store; the scores move by ~sqrt(2)
  // times q's and k's relative error), ~8e-3 for the chain to first order; the CPU rung
  // measures 3.1e-3 to 3.8e-3 at the awkward shapes. The bound is 4 units (3.1e-2): a rope a
  // position late measures 6e-2 to 8e-2, a wrong token, head or page O(1 / sqrt(B)).
  f.output_tolerance = [](const Problem& p, const std::string& output) {
    if (output == "residual_out") return Tolerance{0, 0, 0, 0};
    const double unit = add_rmsnorm_quant::y_error_bound(dims_of(p).hidden) + kUbf16;
    return Tolerance{std::ldexp(1.0, -134), 0, 1.0, 4 * unit};
  };
  f.tolerance = [f_tol = f.output_tolerance](const Problem& p) { return f_tol(p, "out"); };
  return f;
}

}  // namespace klab::attention_block

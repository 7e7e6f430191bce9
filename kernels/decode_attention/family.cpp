// Problem, inputs, reference, counts, tolerances and shapes of the decode_attention family. The
// tensors and the masking are described in family.hpp.
//
// The shape says everything the counts need: b, qlen, hq, hkv, d, page, and the lengths as len
// (the longest), min_len (the shortest non-empty one) and empty (slots of length 0). The
// lengths' values are a function of the shape (context_lengths); only their placement in the
// slots and the pages' placement in the pool are drawn from the seed, so FLOPs and bytes are
// exact for every seed while each check sees a different block table.
//
// FP8 KV: the KV dtype is the problem's dtype (bf16 or e4m3), while q and o stay bf16. An e4m3
// problem adds k_scale and v_scale (fp32, one per KV head, built from the seed) after the block
// table; the reference multiplies each e4m3 value by its head's scale in fp64 (the reference of
// what the cache holds, not of values before quantisation), and the error model adds the terms of
// an e4m3 rung's arithmetic (f16 operands, the scales' fp32 products: score_terms and o_c0).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "kernels/decode_attention/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/kv_scales.hpp"

namespace klab::decode_attention {

namespace {

constexpr double kU32 = 1.0 / (1 << 24);    // fp32 unit roundoff: scores, sums, accumulators
constexpr DType kActivation = DType::bf16;  // q and o, whatever the KV dtype

// d elements of a host tensor from element `offset` times `scale`, as double (bf16 by its bits;
// every product of an e4m3 value and an fp32 scale is exact in fp64).
void load_kv_row(const Tensor& t, int64_t offset, int64_t d, double scale, double* out) {
  if (t.spec.dtype == DType::bf16) {
    const auto* bits = reinterpret_cast<const uint16_t*>(t.host.data()) + offset;
    for (int64_t i = 0; i < d; ++i) {
      const uint32_t w = static_cast<uint32_t>(bits[i]) << 16;
      float f;
      std::memcpy(&f, &w, sizeof f);
      out[i] = f * scale;
    }
    return;
  }
  for (int64_t i = 0; i < d; ++i) out[i] = t.host_at(offset + i) * scale;
}

// KV head hk's scale of `name` (k_scale, v_scale): 1 for a bf16 cache.
double kv_scale(const Buffers& b, const char* name, int64_t hk) {
  return b["k_cache"].spec.dtype == DType::e4m3 ? b[name].host_at(hk) : 1.0;
}

int64_t int_at(const Tensor& t, int64_t i) { return static_cast<int64_t>(t.host_at(i)); }

// Error model of a rung that follows FlashDecoding's arithmetic, for one output element o_d of a
// row with n visible keys and exact softmax weights w_j = exp(s_j - lse):
//   |o_d' - o_d| <= u_out |o_d| + (c0(n) + expm1(c1 A)) m_d
// with m_d = sum_j w_j |v_jd| (the sum of |terms|) and A = max_j scale sum_i |q_i k_ji| (the
// bound of the row's scores). The terms (the attention family's, with the row's own n):
// - P rounded to bf16 before a tensor-core P V product (the mma.sync rungs; CUDA-core rungs
//   keep it in fp32 and the bound still holds): u_bf16 m_d.
// - fp32 accumulation of P V over n terms, 2 n u32 m_d (the tensor-core bound of hgemm's
//   family.cpp, also the sequential FMA bound); the row sum l of n positive terms, n u32
//   relative, carried into o = (sum_j p_j v_j) / l: n u32 m_d. Split-KV rungs sum shorter runs
//   and merge a few partials: the same bound covers them.
// - exp (ex2.approx, 2 ulp) on each p_j, its argument's rounding, the scale and log2(e)
//   products, the split merge's rescales and the final division: 16 u32 m_d, generously.
// - the scores: s_j' = s_j + e_j with |e_j| <= eta a_j, eta = 2 D u32 + 4 u32 (the dot of D
//   exact products accumulated in fp32, the scale and log2(e) products); normalised weights move
//   by at most expm1(2 eta A) relative: c1 = 2 eta.
// Each row's bound depends on its own n (1 to 128k in one ragged batch), so the reference
// reports the whole bound per element as o's magnitude and the check uses mtol = 1.
// lse (fp32): the score errors (eta + u32) A (u32 for the max scale product), the row sum's
// n u32 relative error as an absolute error of its log, __logf's 2^-21.4 absolute error (atol
// 2^-20) and lse's own rounding (rtol 2 u32).
// An e4m3 cache (v08: f16 operands; the CPU rung's fp32 arithmetic is within the same bound):
// - K's scale joins the scores' scale (one more fp32 product: u32 more in eta), V's multiplies
//   the fp32 output (2 u32 more in c0).
// - q in f16: exact where 2^-14 <= |q_i| < 65504 (bf16's 8 significant bits fit f16's 11); a q_i
//   below 2^-14 (f16 subnormal) is off by up to 2^-25, moving each score by up to
//   delta = scale x 2^-25 x sum over such i of |k_ji| <= scale x 2^-25 x n_sub x 448 k_scale:
//   an absolute score error beside eta A (weights: expm1(2 (eta A + delta)); lse: + delta).
// - P in f16: u_f16 relative (below bf16's, already counted) above 2^-14 and an absolute 2^-25
//   below, in units of the running max, which the rescale only shrinks: o moves by up to
//   2^-25 sum_j |v_jd| / l, the reference's abs_sum.
double score_eta(int64_t d, bool e4m3) {
  return 2 * static_cast<double>(d) * kU32 + (e4m3 ? 5 : 4) * kU32;
}
double o_c0(int64_t n, bool e4m3) {
  return dtype_unit_roundoff(kActivation) + 3 * static_cast<double>(n) * kU32 +
         (e4m3 ? 18 : 16) * kU32;
}
constexpr double kF16SubnormalStep = 1.0 / (1 << 24) / (1 << 1);  // 2^-25: half f16's 2^-24
constexpr double kF16MinNormal = 1.0 / (1 << 14);

// The fp64 reference of the listed rows (flat row ids r = (bi * qlen + t) * hq + h), each
// computed once, in parallel: the shared core of the whole and the sampled references.
void reference_rows(const Problem& p, const Buffers& b, const std::vector<int64_t>& rows,
                    std::vector<RowReference>& out) {
  const Dims s = dims_of(p);
  out.resize(rows.size());
#pragma omp parallel
  {
    std::vector<double> scratch;
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i) {
      const int64_t r = rows[i];
      reference_row(p, b, r / (s.qlen * s.hq), (r / s.hq) % s.qlen, r % s.hq, out[i], scratch);
    }
  }
}

int64_t qo_numel(const Dims& s) {
  return checked_product({s.b, s.qlen, s.hq, s.d}, "decode_attention q");
}
int64_t cache_numel(const Dims& s) {
  return checked_product({pool_pages(s), s.hkv, s.page, s.d}, "decode_attention kv cache");
}

Problem shape(int64_t b, int64_t len, int64_t page, int64_t hq = 32, int64_t hkv = 8,
              int64_t d = 128, int64_t min_len = 0, int64_t empty = 0, int64_t qlen = 1) {
  return problem(Dims::of(b, len, page, hq, hkv, d, min_len, empty, qlen));
}

// The problems of v, then each again with an e4m3 KV cache.
std::vector<Problem> and_e4m3(std::vector<Problem> v) {
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) {
    Problem p = v[i];
    p.dtype = DType::e4m3;
    v.push_back(p);
  }
  return v;
}

// Issue 15's done-when: Qwen3-8B's heads (32 query, 8 KV, D = 128), pages of 16 and 64,
// (B, L) = (1, 4k), (1, 32k), (1, 128k), (16, 8k), (64, 4k), (256, 2k), and a ragged batch of 64
// with lengths from 100 to 16k; bf16, then the same with an e4m3 cache.
std::vector<Problem> headline() {
  std::vector<Problem> v;
  for (int64_t page : {16, 64}) {
    for (auto [b, len] : {std::pair<int64_t, int64_t>{1, 4096},
                          {1, 32768},
                          {1, 131072},
                          {16, 8192},
                          {64, 4096},
                          {256, 2048}})
      v.push_back(shape(b, len, page));
    v.push_back(shape(64, 16384, page, 32, 8, 128, /*min_len*/ 100));
  }
  return and_e4m3(v);
}

// Shapes that break careless kernels: every page size against lengths 1, 15, 16, 17 and 1000
// (a page's edges, one token, a partial last page), D = 64, 128, 256; group sizes 1, 4, 5, 6, 7,
// 16; a batch mixing very short and very long sequences; empty slots (alone, among others, with
// speculative tokens); 2-8 new tokens per sequence (speculative verify), some sequences shorter
// than the new tokens (their first rows see no key); length 131072; a counter path whose stolen
// units come from the ticket counter (v31); v13's cluster merge of
// chunks longer than v11 clusters (of 1024 keys and more) and of 16-row row groups; a ragged
// batch large enough to be judged by sampled rows; a ragged batch of more sequences than a CTA
// has threads. Each in bf16, then with an e4m3 cache.
std::vector<Problem> awkward() {
  std::vector<Problem> v;
  const int64_t ds[] = {64, 128, 256};
  int i = 0;
  for (int64_t len : {1, 15, 16, 17, 1000})
    for (int64_t page : {1, 16, 32, 64, 128}) v.push_back(shape(2, len, page, 8, 2, ds[i++ % 3]));
  // Group sizes 1, 4, 5, 6, 7, 16 (Hq / Hkv).
  for (auto [hq, hkv] :
       {std::pair<int64_t, int64_t>{4, 4}, {8, 2}, {10, 2}, {12, 2}, {7, 1}, {32, 2}})
    v.push_back(shape(3, 257, 16, hq, hkv));
  v.push_back(shape(6, 5000, 16, 8, 2, 128, /*min_len*/ 1));     // 1 .. 5000
  v.push_back(shape(8, 65536, 16, 8, 1, 128, /*min_len*/ 1));    // 1 .. 64k (GPU-sized)
  v.push_back(shape(5, 300, 32, 8, 2, 128, /*min_len*/ 17, 2));  // two empty slots
  v.push_back(shape(4, 129, 16, 4, 1, 64, 0, /*empty*/ 3));      // one live slot of four
  v.push_back(shape(3, 100, 64, 8, 2, 128, 0, /*empty*/ 1, 4));  // empty, speculative
  for (int64_t qlen : {2, 4, 8})                                 // speculative verify
    v.push_back(shape(4, 300, 16, 8, 2, 128, /*min_len*/ 1, 0, qlen));
  v.push_back(shape(2, 1000, 16, 10, 2, 256, /*min_len*/ 3, 0, 5));  // group 5, D = 256, Qlen 5
  v.push_back(shape(1, 131072, 128, 8, 1));                          // the longest context
  // One sequence on v13's counter path whose splits run out of fixed units (v31's tickets from
  // its global counter, over three distributions run back to back on one workspace).
  v.push_back(shape(1, 32768, 16, 8, 2));
  v.push_back(shape(1, 15000, 16, 8, 2));  // one sequence in 16 splits of 960 keys (v13 clusters)
  // A cluster merge of 16-row row groups, two rows an owner (v13 at D = 256: the unswapped kernel,
  // Q's tile beside the receive region) and of two row tiles (16 + 4 rows: swapped n8 pairs).
  v.push_back(shape(1, 1000, 16, 32, 2, 256));
  v.push_back(shape(1, 1000, 16, 10, 2, 128, 0, 0, /*qlen*/ 4));
  // v13's cluster merge of two splits of 1280 keys over 128 clusters (as at (16, 8k)).
  v.push_back(shape(16, 2500, 16, 16, 8));
  // Pages of one token over ranges of many tiles a CTA (the persistent rungs' ring in its steady
  // state with 64 page indices a tile), row groups switching inside a CTA's range, an empty slot
  // (a one-tile segment) and speculative tokens.
  v.push_back(shape(6, 32768, 1, 8, 2, 128, /*min_len*/ 2000, /*empty*/ 1, /*qlen*/ 3));
  v.push_back(shape(32, 4000, 16, 32, 2, 128, /*min_len*/ 100));  // sampled rows judge
  // More sequences than a CTA has threads, ragged, with empty slots: v22's compact grid finds
  // its items over two rounds of its block scan of seq_lens.
  v.push_back(shape(200, 600, 16, 8, 2, 128, /*min_len*/ 1, /*empty*/ 3));
  return and_e4m3(v);
}

}  // namespace

Dims dims_of(const Problem& p) {
  Dims s;
  s.b = p.dim("b");
  s.qlen = p.dim("qlen");
  s.hq = p.dim("hq");
  s.hkv = p.dim("hkv");
  s.d = p.dim("d");
  s.page = p.dim("page");
  s.len = p.dim("len");
  s.min_len = p.dim("min_len");
  s.empty = p.dim("empty");
  return s;
}

Problem problem(const Dims& s, DType kv) {
  Problem p;
  p.family = "decode_attention";
  p.shape.dims = {{"b", s.b},        {"qlen", s.qlen}, {"hq", s.hq},   {"hkv", s.hkv},
                  {"d", s.d},        {"page", s.page}, {"len", s.len}, {"min_len", s.min_len},
                  {"empty", s.empty}};
  p.dtype = kv;
  return p;
}

std::vector<int64_t> context_lengths(const Dims& s) {
  const int64_t n = s.b - s.empty;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(s.b));
  const double lo = static_cast<double>(s.min_len), hi = static_cast<double>(s.len);
  for (int64_t i = 0; i < n; ++i) {
    if (n == 1 || i == n - 1) {
      out.push_back(s.len);
      continue;
    }
    const double f = static_cast<double>(i) / static_cast<double>(n - 1);
    out.push_back(std::clamp<int64_t>(std::llround(lo * std::pow(hi / lo, f)), s.min_len, s.len));
  }
  out.insert(out.end(), static_cast<size_t>(s.empty), 0);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t pool_pages(const Dims& s) {
  int64_t need = 0;
  for (int64_t l : context_lengths(s)) need += (l + s.page - 1) / s.page;
  return need + need / 8 + 1;
}

// A seeded Fisher-Yates shuffle.
template <class T>
void shuffle(std::vector<T>& v, uint64_t seed) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[splitmix64(seed + i) % i]);
}

void build_seq_lens(const Dims& s, Tensor& t, uint64_t seed) {
  std::vector<int64_t> lens = context_lengths(s);
  shuffle(lens, seed);
  for (int64_t i = 0; i < s.b; ++i)
    store_from_double(t.host.data(), DType::i32, i, static_cast<double>(lens[i]));
}

void build_block_table(const Dims& s, const Tensor& seq_lens, Tensor& t, uint64_t seed) {
  std::vector<int64_t> pages(static_cast<size_t>(pool_pages(s)));
  std::iota(pages.begin(), pages.end(), 0);
  shuffle(pages, seed);
  size_t next = 0;
  const int64_t cols = s.max_pages();
  for (int64_t bi = 0; bi < s.b; ++bi) {
    const int64_t used = (int_at(seq_lens, bi) + s.page - 1) / s.page;
    KLAB_CHECK(used <= cols && next + static_cast<size_t>(used) <= pages.size(),
               "decode_attention: the pool is too small for the lengths");
    for (int64_t k = 0; k < cols; ++k)
      store_from_double(t.host.data(), DType::i32, bi * cols + k,
                        k < used ? static_cast<double>(pages[next++]) : -1.0);
  }
}

double o_bound_factor(int64_t d, int64_t n, double score_bound, bool e4m3, double delta) {
  return o_c0(n, e4m3) + std::expm1(2 * (score_eta(d, e4m3) * score_bound + delta));
}

void reference_row(const Problem& p, const Buffers& b, int64_t bi, int64_t t, int64_t h,
                   RowReference& out, std::vector<double>& scratch) {
  const Dims s = dims_of(p);
  const Tensor &kc = b["k_cache"], &vc = b["v_cache"], &table = b["block_table"];
  const int64_t len = int_at(b["seq_lens"], bi), n = s.visible_keys(len, t), hk = h / s.group();
  const int64_t pages = kc.spec.numel / (s.hkv * s.page * s.d);
  // Where token j's row of KV head hk starts in the cache (HND pages).
  auto at = [&](int64_t j) {
    const int64_t page = int_at(table, bi * s.max_pages() + j / s.page);
    KLAB_CHECK(page >= 0 && page < pages, "decode_attention: block table entry out of the pool");
    return ((page * s.hkv + hk) * s.page + j % s.page) * s.d;
  };
  std::vector<double> q(static_cast<size_t>(s.d));
  const Tensor& qt = b["q"];
  const bool e4m3 = kc.spec.dtype == DType::e4m3;
  const double ks = kv_scale(b, "k_scale", hk), vs = kv_scale(b, "v_scale", hk);
  int64_t q_subnormal = 0;  // q elements an f16 conversion rounds absolutely (e4m3 rungs)
  for (int64_t i = 0; i < s.d; ++i) {
    q[i] = qt.host_at(((bi * s.qlen + t) * s.hq + h) * s.d + i);
    if (q[i] != 0 && std::fabs(q[i]) < kF16MinNormal) ++q_subnormal;
  }
  attention_row_reference(
      q.data(), s.d, s.scale(), n,
      [&](int64_t j, double* r) { load_kv_row(kc, at(j), s.d, ks, r); },
      [&](int64_t j, double* r) { load_kv_row(vc, at(j), s.d, vs, r); }, out.row, scratch);
  const double a = out.row.score_bound, eta = score_eta(s.d, e4m3);
  const double delta =
      e4m3 ? s.scale() * kF16SubnormalStep * static_cast<double>(q_subnormal) * 448 * ks : 0.0;
  const double c = o_bound_factor(s.d, n, a, e4m3, delta);
  out.o_bound.resize(static_cast<size_t>(s.d));
  for (int64_t i = 0; i < s.d; ++i)
    out.o_bound[i] =
        c * out.row.abs_mean[i] + (e4m3 ? kF16SubnormalStep * out.row.abs_sum[i] : 0.0);
  out.lse_bound = (eta + kU32) * a + delta + static_cast<double>(n) * kU32;
}

Family make_decode_attention() {
  Family f;
  f.name = "decode_attention";
  f.summary =
      "attention of 1-8 new tokens per sequence over a paged KV cache (block tables, ragged "
      "lengths, GQA; bf16 or e4m3 with per-head scales): O and its log-sum-exp, bf16, fp32 "
      "accumulation";
  f.dims = {"b", "qlen", "hq", "hkv", "d", "page", "len", "min_len", "empty"};
  f.zero_ok_dims = {"empty"};
  f.dtypes = {DType::bf16, DType::e4m3};
  f.ceiling = "read";
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    const Dims s = dims_of(p);
    auto fail = [](const std::string& why) { throw UsageError("decode_attention: " + why); };
    if (s.hq % s.hkv != 0)
      fail("hq (" + std::to_string(s.hq) + ") must be a multiple of hkv (" + std::to_string(s.hkv) +
           ")");
    if (s.qlen > 8) fail("qlen must be 1 (decode) to 8 (speculative verify)");
    if (s.min_len > s.len) fail("min_len must not exceed len");
    if (s.empty >= s.b) fail("empty must leave at least one slot with a context");
    if (s.len > (int64_t(1) << 30)) fail("len above 2^30");
    if (s.page > 4096) fail("page above 4096 tokens");
    if (s.d > 1024) fail("d above 1024");
    // Lengths and page indices are i32.
    if (s.b * s.max_pages() > INT32_MAX || pool_pages(s) > INT32_MAX)
      fail("the block table or the pool exceeds i32 indices");
  };
  f.tensors = [](const Problem& p) {
    const Dims s = dims_of(p);
    TensorSpec lens{"seq_lens", DType::i32, s.b, Role::input};
    lens.build = [s](const Buffers&, Tensor& t, uint64_t seed) { build_seq_lens(s, t, seed); };
    TensorSpec table{"block_table", DType::i32,
                     checked_product({s.b, s.max_pages()}, "decode_attention block table"),
                     Role::input};
    table.build = [s](const Buffers& b, Tensor& t, uint64_t seed) {
      build_block_table(s, b["seq_lens"], t, seed);
    };
    std::vector<TensorSpec> specs{{"q", kActivation, qo_numel(s), Role::input},
                                  {"k_cache", p.dtype, cache_numel(s), Role::input},
                                  {"v_cache", p.dtype, cache_numel(s), Role::input},
                                  lens,
                                  table};
    if (p.dtype == DType::e4m3)
      for (const char* name : {"k_scale", "v_scale"}) {
        TensorSpec scale{name, DType::f32, s.hkv, Role::input};
        scale.build = [](const Buffers&, Tensor& t, uint64_t seed) { build_kv_scales(t, seed); };
        specs.push_back(scale);
      }
    specs.push_back({"o", kActivation, qo_numel(s), Role::output});
    specs.push_back({"lse", DType::f32,
                     checked_product({s.b, s.qlen, s.hq}, "decode_attention lse"), Role::output});
    return specs;
  };
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const Dims s = dims_of(p);
    std::vector<int64_t> rows(static_cast<size_t>(s.rows()));
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<RowReference> rr;
    reference_rows(p, b, rows, rr);
    RefOutput& o = ref["o"];
    RefOutput& lse = ref["lse"];
    o.value.resize(static_cast<size_t>(s.rows() * s.d));
    o.magnitude.resize(o.value.size());
    lse.value.resize(static_cast<size_t>(s.rows()));
    lse.magnitude.resize(lse.value.size());
    for (int64_t r = 0; r < s.rows(); ++r) {  // lse is (B, Qlen, Hq): the rows' order
      std::copy(rr[r].row.o.begin(), rr[r].row.o.end(), o.value.begin() + r * s.d);
      std::copy(rr[r].o_bound.begin(), rr[r].o_bound.end(), o.magnitude.begin() + r * s.d);
      lse.value[r] = rr[r].row.lse;
      lse.magnitude[r] = rr[r].lse_bound;
    }
  };
  // FlashAttention's 4 flops per (query, visible key) pair and head dimension. Bytes: the KV
  // actually read (each visible token's K and V rows of every KV head, once: the query heads of
  // a group share them), Q and O, lse, the block table entries in use and the lengths; the pool's
  // other pages and the table's padding are never read.
  f.counts = [](const Problem& p) {
    const Dims s = dims_of(p);
    double pairs = 0, tokens = 0, pages = 0;
    for (int64_t l : context_lengths(s)) {
      for (int64_t t = 0; t < s.qlen; ++t) pairs += static_cast<double>(s.visible_keys(l, t));
      tokens += static_cast<double>(l);
      pages += static_cast<double>((l + s.page - 1) / s.page);
    }
    const double hq = static_cast<double>(s.hq), hkv = static_cast<double>(s.hkv);
    const double d = static_cast<double>(s.d);
    const double kv_bytes = tokens * hkv * d * 2 * dtype_size(p.dtype);
    const double qo_bytes = 2.0 * static_cast<double>(qo_numel(s)) * dtype_size(kActivation);
    const double scales = p.dtype == DType::e4m3 ? 2 * 4 * hkv : 0.0;
    const double rest = 4.0 * static_cast<double>(s.rows()) + 4.0 * (pages + s.b) + scales;
    return Counts{4 * pairs * hq * d, kv_bytes + qo_bytes + rest};
  };

  // o: the row's bound (error model above) through its magnitude (mtol = 1), the output's own
  // rounding (rtol = u_bf16) and bf16's smallest subnormal, halved (atol: an empty row must read
  // 0). lse: the row's bound as its magnitude (mtol = 1), atol 2^-20, rtol 2 u32.
  // Relative L2 (a statistic: rounding errors of random sign), at the longest length:
  // o's rounding and P's, 2 u_bf16, the accumulations 4 sqrt(len) u32, the scores' share
  // 8 D u32 (the attention family's argument, amp = 1); lse's errors are absolute, its RMS over
  // rows at least ~1/3, hence the factor 3. A sequence reading a wrong page or a lost page of
  // tokens moves its o rows by percents (o is a weighted mean of ~len random rows: one page
  // holds P / len of the weight and moves o by ~P / sqrt(len) of its size), far above these.
  f.output_tolerance = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    const double len = static_cast<double>(s.len), d = static_cast<double>(s.d);
    const double scores_l2 = 8 * d * kU32;
    if (output == "lse") {
      const double l2 = 3 * (4 * std::sqrt(len) * kU32 + std::ldexp(1.0, -20) + scores_l2);
      return Tolerance{std::ldexp(1.0, -20), 2 * kU32, 1.0, l2 + 4 * kU32};
    }
    const double u = dtype_unit_roundoff(kActivation);
    return Tolerance{std::ldexp(1.0, -134), u, 1.0, 2 * u + 4 * std::sqrt(len) * kU32 + scores_l2};
  };
  f.tolerance = [f_tol = f.output_tolerance](const Problem& p) { return f_tol(p, "o"); };

  // Sampled at large sizes, by sequences: o as B rows of Qlen * Hq * D, lse as B rows of
  // Qlen * Hq. The harness's sample then holds the whole first and last sequences, every
  // sequence's first and last query rows (the first and last columns: so the longest sequence,
  // wherever the seed put it, and every length of a ragged batch), the rows around the last
  // tile boundaries, and uniform elements; each query row it touches is computed once, whole.
  f.cpu_reference_max_flops = kCpuReferenceMaxFlops;
  f.output_grid = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    return OutputGrid{s.b, s.qlen * s.hq * (output == "lse" ? 1 : s.d)};
  };
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string& output,
                      const std::vector<int64_t>& index, RefOutput& out) {
    const Dims s = dims_of(p);
    const bool lse = output == "lse";
    auto row_of = [&](int64_t e) { return lse ? e : e / s.d; };
    const std::vector<int64_t> rows = sampled_rows(index, row_of);
    std::vector<RowReference> rr;
    reference_rows(p, b, rows, rr);
    out.value.resize(index.size());
    out.magnitude.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      const RowReference& r = rr[row_position(rows, row_of(index[i]))];
      out.value[i] = lse ? r.row.lse : r.row.o[index[i] % s.d];
      out.magnitude[i] = lse ? r.lse_bound : r.o_bound[index[i] % s.d];
    }
  };
  return f;
}

}  // namespace klab::decode_attention

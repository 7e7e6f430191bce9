// Problem, inputs, reference, counts, tolerances and shapes of the qk_norm_rope_cache family. The
// tensors and the arithmetic are described in family.hpp.
//
// The shape: tokens, hq, hkv, d, page; seqs and context, which say how the tokens sit in their
// sequences (T / seqs new tokens each, ending at a length between their count and `context`,
// one sequence at exactly `context`); and three dimensions a shape may leave out: skip (tokens
// with slot -1), zero_rows (tokens whose qkv row is 0) and amp (a power of two multiplying
// qkv). Positions and slots are drawn from the seed, so each check sees other positions and
// other pages; the counts depend on the shape alone. The problem's dtype is the KV cache's: bf16,
// or e4m3 with a scale per KV head (k_scale and v_scale, drawn from the seed after slot_mapping).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/kv_scales.hpp"
#include "klab/harness/reference_attention.hpp"

namespace klab::qk_norm_rope_cache {

namespace {

constexpr double kU32 = 1.0 / (1 << 24);     // fp32 unit roundoff
constexpr double kUbf16 = 1.0 / 256;         // bf16 unit roundoff (dtype_unit_roundoff)
constexpr double kUe4m3 = 1.0 / 16;          // e4m3 unit roundoff (3 fraction bits)
constexpr double kE4m3Max = 448;             // e4m3's largest finite value: saturated to it
constexpr double kE4m3HalfSub = 1.0 / 1024;  // half of e4m3's subnormal step (2^-9)

int64_t int_at(const Tensor& t, int64_t i) { return static_cast<int64_t>(t.host_at(i)); }

int64_t qkv_numel(const Dims& s) {
  return checked_product({s.tokens, s.heads(), s.d}, "qk_norm_rope_cache qkv");
}
int64_t q_numel(const Dims& s) {
  return checked_product({s.tokens, s.hq, s.d}, "qk_norm_rope_cache q_out");
}

bool e4m3_pools(const Problem& p) { return p.dtype == DType::e4m3; }

// A seeded Fisher-Yates shuffle.
template <class T>
void shuffle(std::vector<T>& v, uint64_t seed) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[splitmix64(seed + i) % i]);
}

// Tokens 0 .. T-1 in a seeded order: the first `count` of it are the ones a builder marks.
std::vector<char> seeded_marks(int64_t tokens, int64_t count, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(tokens));
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, seed);
  std::vector<char> marked(order.size(), 0);
  for (int64_t i = 0; i < count; ++i) marked[order[i]] = 1;
  return marked;
}

Problem shape(int64_t tokens, int64_t hq, int64_t hkv, int64_t d, int64_t page, int64_t seqs,
              int64_t context, int64_t skip = 0, int64_t zero_rows = 0, int64_t amp = 1) {
  return problem(Dims{tokens, hq, hkv, d, page, seqs, context, skip, zero_rows, amp});
}

// The same problem with e4m3 pools.
Problem with_e4m3(Problem p) {
  p.dtype = DType::e4m3;
  return p;
}

// Issue 15: tokens 1 to 16384 with Qwen3-8B's heads (32 query, 8 KV, D = 128), pages of 16. 1
// and 16 tokens are decode steps (one token per sequence: launch- and latency-bound, the fused
// kernel's one launch against the baseline's three), 4096 and 16384 prefill chunks of a few
// sequences (bandwidth-bound: the copy ceiling).
// Each with bf16 pools, then with e4m3 pools.
std::vector<Problem> headline() {
  std::vector<Problem> v{shape(1, 32, 8, 128, 16, 1, 4096), shape(16, 32, 8, 128, 16, 16, 4096),
                         shape(4096, 32, 8, 128, 16, 4, 8192),
                         shape(16384, 32, 8, 128, 16, 8, 16384)};
  for (size_t i = 0, n = v.size(); i < n; ++i) v.push_back(with_e4m3(v[i]));
  return v;
}

// Shapes that break careless kernels: token counts that fill no warp or wave (1, 3, 17, 1000)
// against pages of 1, 16 and 64 tokens, each with one of the head layouts (group 1 at D = 64,
// group 4 at D = 128, group 5 at D = 256) and contexts from 1 (position 0 alone) to 5000 (a
// sequence's new tokens straddling page edges); positions up to 131071; slots of -1 (some, and
// every token's); zero rows (some, and every row); large magnitudes (qkv times 2^20 and 2^30,
// with zero rows and skips beside them); Qwen3-8B's heads at a few tokens, a decode batch and a
// thousand-token chunk.
std::vector<Problem> awkward() {
  struct Heads {
    int64_t hq, hkv, d;
  };
  const Heads heads[3] = {{8, 8, 64}, {8, 2, 128}, {10, 2, 256}};
  struct Tokens {
    int64_t tokens, seqs, context;
  };
  const Tokens counts[4] = {{1, 1, 1}, {3, 2, 16}, {17, 3, 1000}, {1000, 7, 5000}};
  std::vector<Problem> v;
  for (int ti = 0; ti < 4; ++ti)
    for (int pi = 0; pi < 3; ++pi) {
      const Heads& h = heads[(ti + pi) % 3];
      const Tokens& c = counts[ti];
      const int64_t page = pi == 0 ? 1 : pi == 1 ? 16 : 64;
      // One token with pages of 16 and 64 at context 17 and 65: a page's first slot.
      const int64_t context = c.tokens == 1 && page > 1 ? page + 1 : c.context;
      v.push_back(shape(c.tokens, h.hq, h.hkv, h.d, page, c.seqs, context));
    }
  v.push_back(shape(5, 8, 2, 128, 16, 2, 131072));      // positions up to 131071
  v.push_back(shape(3, 4, 1, 64, 1, 1, 131072));        // ... one token a page
  v.push_back(shape(17, 8, 2, 128, 16, 3, 1000, 5));    // five slots of -1
  v.push_back(shape(16, 8, 2, 64, 16, 16, 100, 16));    // every slot -1: the pools stay as they are
  v.push_back(shape(33, 8, 2, 128, 16, 4, 300, 0, 4));  // zero rows
  v.push_back(shape(9, 4, 4, 64, 16, 3, 20, 0, 9));     // every row zero
  v.push_back(shape(17, 8, 2, 128, 16, 3, 500, 2, 3, int64_t(1) << 30));  // large magnitudes
  v.push_back(shape(7, 10, 2, 256, 64, 2, 2000, 0, 0, int64_t(1) << 20));
  v.push_back(shape(17, 32, 8, 128, 16, 4, 2048));    // Qwen3-8B's heads
  v.push_back(shape(64, 32, 8, 128, 16, 64, 4096));   // ... a decode batch
  v.push_back(shape(1000, 32, 8, 128, 64, 5, 4096));  // ... a chunk of five sequences
  // e4m3 pools: each token count, page size and head layout above once (pages of 1, 16, 64),
  // slots of -1, zero rows, and large magnitudes (v saturates at +-448 over its scale; k, a
  // normalised head, does not), positions up to 131071, Qwen3-8B's heads.
  for (const Problem& p : {shape(1, 8, 8, 64, 1, 1, 1), shape(3, 8, 2, 128, 16, 2, 16),
                           shape(17, 10, 2, 256, 64, 3, 1000), shape(1000, 8, 8, 64, 16, 7, 5000),
                           shape(5, 8, 2, 128, 16, 2, 131072), shape(17, 8, 2, 128, 16, 3, 1000, 5),
                           shape(33, 8, 2, 128, 16, 4, 300, 0, 4),
                           shape(17, 8, 2, 128, 16, 3, 500, 2, 3, int64_t(1) << 30),
                           shape(64, 32, 8, 128, 16, 64, 4096)})
    v.push_back(with_e4m3(p));
  return v;
}

// The fp64 references of the listed (token, head) pairs (flat t * (Hq + Hkv) + head), each
// computed once, in parallel.
void reference_heads(const Dims& s, const Buffers& b, const std::vector<int64_t>& rows,
                     std::vector<HeadReference>& out) {
  out.resize(rows.size());
  const int64_t per_token = s.hq + s.hkv;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i)
    reference_head(s, b, rows[i] / per_token, rows[i] % per_token, out[i]);
}

// The written pool elements' references: x with bound `pre` as they are for bf16 pools,
// quantised for e4m3 ones by their KV head's scale (quantised_reference). The pools' dtype and
// scales are read from the buffers once, not at every element.
class PoolElements {
 public:
  explicit PoolElements(const Buffers& b) : e4m3_(b["k_cache"].spec.dtype == DType::e4m3) {
    if (!e4m3_) return;
    for (int64_t h = 0; h < b["k_scale"].spec.numel; ++h) {
      k_scale_.push_back(b["k_scale"].host_at(h));
      v_scale_.push_back(b["v_scale"].host_at(h));
    }
  }
  /// Element of KV head h of the v pool (is_v) or the k pool.
  void operator()(bool is_v, int64_t h, double x, double pre, double& value, double& bound) const {
    if (!e4m3_) {
      value = x;
      bound = pre;
      return;
    }
    const QuantisedReference q = quantised_reference(x, pre, (is_v ? v_scale_ : k_scale_)[h]);
    value = q.value;
    bound = q.bound;
  }

 private:
  bool e4m3_;
  std::vector<double> k_scale_, v_scale_;
};

// The token writing each pool slot (-1: none), from the host slot_mapping.
std::vector<int64_t> slot_writers(const Dims& s, const Buffers& b) {
  std::vector<int64_t> writer(static_cast<size_t>(s.pool_pages() * s.page), -1);
  for (int64_t t = 0; t < s.tokens; ++t) {
    const int64_t slot = int_at(b["slot_mapping"], t);
    if (slot < 0) continue;
    KLAB_CHECK(slot < static_cast<int64_t>(writer.size()), "qk_norm_rope_cache: slot off the pool");
    KLAB_CHECK(writer[slot] < 0, "qk_norm_rope_cache: two tokens share a slot");
    writer[slot] = t;
  }
  return writer;
}

}  // namespace

int64_t Dims::pool_pages() const {
  int64_t need = 0;
  for (int64_t b = 0; b < seqs; ++b) need += (new_tokens(b) - 1 + page - 1) / page + 1;
  return need + need / 8 + 1;
}

int64_t Dims::pool_numel() const {
  return checked_product({pool_pages(), hkv, page, d}, "qk_norm_rope_cache kv cache");
}

Dims dims_of(const Problem& p) {
  return Dims{p.dim("tokens"), p.dim("hq"),      p.dim("hkv"),  p.dim("d"),         p.dim("page"),
              p.dim("seqs"),   p.dim("context"), p.dim("skip"), p.dim("zero_rows"), p.dim("amp")};
}

Problem problem(const Dims& s, DType kv) {
  Problem p;
  p.family = "qk_norm_rope_cache";
  p.shape.dims = {
      {"tokens", s.tokens},       {"hq", s.hq},     {"hkv", s.hkv},         {"d", s.d},
      {"page", s.page},           {"seqs", s.seqs}, {"context", s.context}, {"skip", s.skip},
      {"zero_rows", s.zero_rows}, {"amp", s.amp}};
  p.dtype = kv;
  return p;
}

void build_positions(const Dims& s, Tensor& positions, uint64_t seed) {
  const auto longest = static_cast<int64_t>(splitmix64(seed ^ 0x7a11) % s.seqs);
  for (int64_t b = 0; b < s.seqs; ++b) {
    const int64_t n = s.new_tokens(b);
    const int64_t len = b == longest
                            ? s.context
                            : n + static_cast<int64_t>(splitmix64(seed + b) %
                                                       static_cast<uint64_t>(s.context - n + 1));
    for (int64_t j = 0; j < n; ++j)
      store_from_double(positions.host.data(), DType::i32, s.first_token(b) + j,
                        static_cast<double>(len - n + j));
  }
}

std::vector<int32_t> build_block_table(const Dims& s, const Tensor& positions, uint64_t seed) {
  std::vector<int32_t> pages(static_cast<size_t>(s.pool_pages()));
  std::iota(pages.begin(), pages.end(), 0);
  shuffle(pages, seed);
  std::vector<int32_t> table(static_cast<size_t>(s.seqs * s.table_cols()), -1);
  size_t next = 0;
  for (int64_t b = 0; b < s.seqs; ++b) {
    const int64_t first = int_at(positions, s.first_token(b));
    const int64_t last = int_at(positions, s.first_token(b) + s.new_tokens(b) - 1);
    for (int64_t k = first / s.page; k <= last / s.page; ++k) {
      KLAB_CHECK(next < pages.size(), "qk_norm_rope_cache: the pool is too small for the pages");
      table[b * s.table_cols() + k] = pages[next++];
    }
  }
  return table;
}

void build_slot_mapping(const Dims& s, const Tensor& positions, Tensor& slots, uint64_t seed) {
  const std::vector<int32_t> table = build_block_table(s, positions, seed);
  const std::vector<char> skipped = seeded_marks(s.tokens, s.skip, splitmix64(seed ^ 0x5419));
  for (int64_t b = 0; b < s.seqs; ++b)
    for (int64_t t = s.first_token(b); t < s.first_token(b) + s.new_tokens(b); ++t) {
      const int64_t pos = int_at(positions, t);
      const int64_t page = table[b * s.table_cols() + pos / s.page];
      const int64_t slot = skipped[t] ? -1 : page * s.page + pos % s.page;
      store_from_double(slots.host.data(), DType::i64, t, static_cast<double>(slot));
    }
}

void build_qkv(const Dims& s, Tensor& qkv, uint64_t seed) {
  fill_random(qkv.host.data(), DType::bf16, qkv.spec.numel, Dist::normal, seed);
  const std::vector<char> zero = seeded_marks(s.tokens, s.zero_rows, splitmix64(seed ^ 0x2e50));
  const int64_t row = s.heads() * s.d;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < s.tokens; ++t)
    for (int64_t i = t * row; i < (t + 1) * row; ++i)  // x amp: exact (a power of two)
      store_from_double(qkv.host.data(), DType::bf16, i,
                        zero[t] ? 0.0 : qkv.host_at(i) * static_cast<double>(s.amp));
}

void fill_sentinel(Tensor& pool) {
  if (pool.spec.dtype == DType::e4m3) {
    auto* bits = reinterpret_cast<uint8_t*>(pool.host.data());
    std::fill(bits, bits + pool.spec.numel, kSentinelE4m3);
    return;
  }
  auto* bits = reinterpret_cast<uint16_t*>(pool.host.data());
  std::fill(bits, bits + pool.spec.numel, kSentinelBits);
}

void reference_head(const Dims& s, const Buffers& b, int64_t t, int64_t head, HeadReference& out) {
  const Tensor& qkv = b["qkv"];
  const Tensor& w = b[head < s.hq ? "q_weight" : "k_weight"];
  const int64_t d = s.d, half = d / 2, base = (t * s.heads() + head) * d;
  std::vector<double> y(static_cast<size_t>(d));
  double sum_sq = 0;
  for (int64_t i = 0; i < d; ++i) {
    y[i] = qkv.host_at(base + i);
    sum_sq += y[i] * y[i];
  }
  const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(d) + kEps);
  for (int64_t i = 0; i < d; ++i) y[i] *= inv_rms * w.host_at(i);
  // The angle in fp64 straight from its definition (the rungs reduce theirs: rope.hpp).
  const double pos = b["positions"].host_at(t);
  const double e = y_error_bound(d) + cos_sin_error_bound() + 4 * kU32;
  out.out.resize(static_cast<size_t>(d));
  out.bound.resize(out.out.size());
  for (int64_t i = 0; i < half; ++i) {
    const double angle = pos * std::pow(kTheta, -2.0 * static_cast<double>(i) / d);
    const double c = std::cos(angle), sn = std::sin(angle);
    out.out[i] = y[i] * c - y[i + half] * sn;
    out.out[i + half] = y[i + half] * c + y[i] * sn;
    const double pair = (1 + kUbf16) * e * (std::fabs(y[i]) + std::fabs(y[i + half]));
    out.bound[i] = kUbf16 * std::fabs(out.out[i]) + pair;
    out.bound[i + half] = kUbf16 * std::fabs(out.out[i + half]) + pair;
  }
}

// Tolerances. The rungs compute y in fp32 from the bf16 head x:
//  - the sum of the D squares (each exact in fp32: a bf16 square has 16 significant bits, and
//    amp <= 2^40 keeps it far from fp32's range) in any order and tree, positive terms:
//    relative error <= (D - 1) u32;
//  - the mean (a product with 1 / D, exact for D a power of two, one rounding otherwise) and
//    + eps: 2 u32; rsqrtf: at most 2 ulp, <= 4 u32; the square root halves the sum's error, so
//    1 / rms errs by <= ((D + 1) / 2 + 4) u32;
//  - the products x * inv_rms * w: 2 u32; the unfused baseline rounds y to bf16 (a standalone
//    RMSNorm returns the model's dtype): u_bf16 (the fused rungs keep y in fp32; the bound
//    covers both); 1 u32 spare:
//  e_y = u_bf16 + (D / 2 + 8) u32, relative to each |y_i| (3.9e-3 at D = 128).
double y_error_bound(int64_t d) { return kUbf16 + (static_cast<double>(d) / 2 + 8) * kU32; }
// rope.hpp derives < 2.7 u32 for the rungs' cos and sin at any position below 2^20.
double cos_sin_error_bound() { return 4 * kU32; }

// e4m3 pools. A rung holds x' (fp32, or bf16 in the unfused baseline) within `pre` of the fp64
// value x (reference_head's bound for k, which covers a bf16 rounding of x'; 0 for v, a bf16
// input), multiplies it by its head's 1 / scale (the reciprocal and the product: within 3 u32 of
// x' / scale, or a division: 1 u32) and rounds to e4m3, nearest, saturating (round-to-nearest
// is within u_e4m3 = 2^-4 of the value in e4m3's normal range, within half its subnormal step,
// 2^-10, below it; saturation clamps both the rung's value and the reference at +-448, which
// only brings them closer). So with q = x / scale and
//   pre_q = pre / scale + 3 u32 (|x| + pre) / scale
// the stored value is within (1 + u_e4m3) pre_q + u_e4m3 |clamp(q)| + 2^-10 of clamp(q). A wrong
// scale (another head's: 2^-2 to 2^1, drawn apart), or a missing one misses by far more than
// that.
QuantisedReference quantised_reference(double x, double pre, double scale) {
  const double q = std::clamp(x / scale, -kE4m3Max, kE4m3Max);
  const double pre_q = (pre + 3 * kU32 * (std::fabs(x) + pre)) / scale;
  return {q, (1 + kUe4m3) * pre_q + kUe4m3 * std::fabs(q) + kE4m3HalfSub};
}

Family make_qk_norm_rope_cache() {
  Family f;
  f.name = "qk_norm_rope_cache";
  f.summary =
      "Qwen3's per-head RMSNorm of q and k, rotary embedding (NeoX, theta 1e6) and the write of k "
      "and v into a paged KV cache by slot_mapping: q (bf16) and the pools (the dtype: bf16, or "
      "e4m3 with a scale per KV head)";
  f.dims = {"tokens", "hq", "hkv", "d", "page", "seqs", "context", "skip", "zero_rows", "amp"};
  f.zero_ok_dims = {"skip", "zero_rows"};
  f.default_dims = {{"skip", 0}, {"zero_rows", 0}, {"amp", 1}};
  f.dtypes = {DType::bf16, DType::e4m3};
  // Reads and writes 2 (Hq + 2 Hkv) D bytes a token (48 heads of 256 bytes each way with
  // Qwen3-8B's; with e4m3 pools the k and v heads are written in half the bytes): the copy mix
  // of the measured ceilings.
  f.ceiling = "copy";
  f.headline = headline();
  f.awkward = awkward();

  f.validate = [](const Problem& p) {
    const Dims s = dims_of(p);
    auto fail = [](const std::string& why) { throw UsageError("qk_norm_rope_cache: " + why); };
    if (s.hq % s.hkv != 0)
      fail("hq (" + std::to_string(s.hq) + ") must be a multiple of hkv (" + std::to_string(s.hkv) +
           ")");
    if (s.d % 2 != 0 || s.d > 1024) fail("d must be even and at most 1024 (rotate-half pairs)");
    if (s.seqs > s.tokens) fail("seqs must not exceed tokens (each sequence has a new token)");
    if (s.new_tokens(0) > s.context) fail("context must hold each sequence's new tokens");
    if (s.context > (int64_t(1) << 20)) fail("context above 2^20 (rope.hpp's error bound)");
    if (s.page > 4096) fail("page above 4096 tokens");
    if (s.skip > s.tokens || s.zero_rows > s.tokens)
      fail("skip and zero_rows must not exceed tokens");
    if (s.amp > (int64_t(1) << 40) || (s.amp & (s.amp - 1)) != 0)
      fail("amp must be a power of two up to 2^40 (its squares stay in fp32's range)");
    qkv_numel(s);
    s.pool_numel();
    if (s.pool_pages() > INT32_MAX) fail("the pool exceeds i32 page indices");
  };
  f.tensors = [](const Problem& p) {
    const Dims s = dims_of(p);
    TensorSpec qkv{"qkv", DType::bf16, qkv_numel(s), Role::input};
    if (s.zero_rows > 0 || s.amp > 1)
      qkv.build = [s](const Buffers&, Tensor& t, uint64_t seed) { build_qkv(s, t, seed); };
    TensorSpec positions{"positions", DType::i32, s.tokens, Role::input};
    positions.build = [s](const Buffers&, Tensor& t, uint64_t seed) {
      build_positions(s, t, seed);
    };
    TensorSpec slots{"slot_mapping", DType::i64, s.tokens, Role::input};
    slots.build = [s](const Buffers& b, Tensor& t, uint64_t seed) {
      build_slot_mapping(s, b["positions"], t, seed);
    };
    std::vector<TensorSpec> v{qkv,
                              {"q_weight", DType::bf16, s.d, Role::input},
                              {"k_weight", DType::bf16, s.d, Role::input},
                              positions,
                              slots};
    if (e4m3_pools(p))
      for (const char* name : {"k_scale", "v_scale"}) {
        TensorSpec scale{name, DType::f32, s.hkv, Role::input};
        scale.build = [](const Buffers&, Tensor& t, uint64_t seed) { build_kv_scales(t, seed); };
        v.push_back(scale);
      }
    v.push_back({"q_out", DType::bf16, q_numel(s), Role::output});
    for (const char* pool : {"k_cache", "v_cache"}) {
      TensorSpec spec{pool, p.dtype, s.pool_numel(), Role::inout};
      spec.build = [](const Buffers&, Tensor& t, uint64_t) { fill_sentinel(t); };
      v.push_back(spec);
    }
    return v;
  };
  // The whole reference: q_out head by head; the pools as they were, with each written slot's k
  // (its reference and bound) and v (the input, exact); in e4m3 pools both quantised
  // (PoolElements).
  f.reference = [](const Problem& p, const Buffers& b, Reference& ref) {
    const Dims s = dims_of(p);
    const int64_t per_token = s.hq + s.hkv;
    std::vector<int64_t> rows;
    for (int64_t t = 0; t < s.tokens; ++t) {
      const bool written = int_at(b["slot_mapping"], t) >= 0;
      for (int64_t h = 0; h < (written ? per_token : s.hq); ++h) rows.push_back(t * per_token + h);
    }
    std::vector<HeadReference> heads;
    reference_heads(s, b, rows, heads);
    RefOutput& q = ref["q_out"];
    q.value.resize(static_cast<size_t>(q_numel(s)));
    q.magnitude.resize(q.value.size());
    RefOutput& k = ref["k_cache"];
    RefOutput& v = ref["v_cache"];
    for (RefOutput* pool : {&k, &v}) {
      const Tensor& in = b[pool == &k ? "k_cache" : "v_cache"];
      pool->value.resize(static_cast<size_t>(in.spec.numel));
      for (int64_t e = 0; e < in.spec.numel; ++e) pool->value[e] = in.host_at(e);
    }
    k.magnitude.assign(k.value.size(), 0.0);  // untouched slots: exact
    v.magnitude.assign(v.value.size(), 0.0);
    const PoolElements pool_element(b);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t t = rows[i] / per_token, h = rows[i] % per_token;
      const HeadReference& r = heads[i];
      if (h < s.hq) {
        std::copy(r.out.begin(), r.out.end(), q.value.begin() + (t * s.hq + h) * s.d);
        std::copy(r.bound.begin(), r.bound.end(), q.magnitude.begin() + (t * s.hq + h) * s.d);
        continue;
      }
      const int64_t kv = h - s.hq,
                    at = pool_offset(int_at(b["slot_mapping"], t), kv, s.hkv, s.page, s.d);
      const int64_t src = (t * s.heads() + s.hq + s.hkv + kv) * s.d;
      for (int64_t c = 0; c < s.d; ++c) {
        pool_element(false, kv, r.out[c], r.bound[c], k.value[at + c], k.magnitude[at + c]);
        pool_element(true, kv, b["qkv"].host_at(src + c), 0, v.value[at + c], v.magnitude[at + c]);
      }
    }
  };
  // Minimal work: each q head and the k and v heads of every written token read once, the
  // weights, positions and slots read once, q and the written k and v heads stored once (a
  // token with slot -1 needs no k or v). Flops per normalised and rotated element: the square
  // and its sum, the two products of the norm, the rotation's two products and its sum: 7.
  f.counts = [](const Problem& p) {
    const Dims s = dims_of(p);
    const double d = static_cast<double>(s.d), t = static_cast<double>(s.tokens);
    const double written = static_cast<double>(s.tokens - s.skip);
    const double q_bytes = t * static_cast<double>(s.hq) * d * 2;
    const double kv_heads = written * 2 * static_cast<double>(s.hkv) * d;  // elements
    const double kv_elem = e4m3_pools(p) ? 1 : 2, scales = e4m3_pools(p) ? 2.0 * s.hkv * 4 : 0;
    const double bytes = 2 * q_bytes + kv_heads * (2 + kv_elem) + 2 * d * 2 + t * (4 + 8) + scales;
    const double flops =
        7 * d * (t * static_cast<double>(s.hq) + written * static_cast<double>(s.hkv));
    return Counts{flops, bytes};
  };

  // q_out and the written k rows, element by element (reference_head): the rung's y_i and y_p
  // (the pair's partner) each within e_y of the exact ones; cos and sin within e_cs (rope.hpp);
  // the rotation y_i c - y_p s (a product and an fma, or two products and a sum) within 2 u32
  // of |y_i| + |y_p|; then rounded to bf16 (u_bf16 of the computed value, whose own error adds
  // the (1 + u_bf16) factor); 2 u32 spare:
  //   |out' - out| <= u_bf16 |out| + (1 + u_bf16) (e_y + e_cs + 4 u32) (|y_i| + |y_p|)
  // (about 2^-8 |out| + 3.9e-3 (|y_i| + |y_p|) at D = 128: one or two bf16 ulps). The reference
  // reports it as each element's magnitude (mtol = 1), 0 at the slots no token writes: those
  // must keep the pool's value exactly, and v is a copy, exact everywhere. A rotation by a wrong
  // theta, a wrong pair (interleaved instead of rotate-half) or a wrong position moves out by
  // O(|y|), a missing or wrong weight by O(|y|), a write to a wrong slot replaces a sentinel:
  // all far outside.
  // Relative L2 (implied by the elementwise bound, not tighter): the pair terms sum to at most
  // 2 ||out|| in L2 (a rotation keeps each pair's norm), so rel_l2 <= u_bf16 + 2 (1 + u) e.
  // e4m3 pools (quantised_reference): every element within its bound; the relative L2 of k within
  // u_e4m3 + (1 + u_e4m3)(k's bf16 bound above + 3 u32) + 2^-8, of v within u_e4m3 + 2^-8, the
  // 2^-8 covering the subnormal term 2^-10 against rows whose RMS over their scale is at least
  // 1/2 (a normalised k head's RMS is its weight's, ~1; v is N(0, 1) times amp; scales <= 2).
  f.output_tolerance = [](const Problem& p, const std::string& output) {
    const double e = y_error_bound(dims_of(p).d) + cos_sin_error_bound() + 4 * kU32;
    const double rel_l2 = kUbf16 + 2 * (1 + kUbf16) * e;
    if (e4m3_pools(p) && output != "q_out")
      return Tolerance{
          0, 0, 1.0,
          kUe4m3 + 1.0 / 256 + (output == "k_cache" ? (1 + kUe4m3) * (rel_l2 + 3 * kU32) : 0.0)};
    if (output == "v_cache") return Tolerance{0, 0, 0, 0};
    return Tolerance{0, 0, 1.0, rel_l2};
  };
  f.tolerance = [f_tol = f.output_tolerance](const Problem& p) { return f_tol(p, "q_out"); };

  // Sampled at large sizes: q_out as T rows of Hq * D (the whole first and last tokens), the
  // pools as rows of D (one KV head of one slot each: the first and last pages' first and last
  // slots, uniform ones); each sampled head computed once, whole.
  f.cpu_reference_max_flops = kCpuReferenceMaxFlops;
  f.output_grid = [](const Problem& p, const std::string& output) {
    const Dims s = dims_of(p);
    if (output == "q_out") return OutputGrid{s.tokens, s.hq * s.d};
    return OutputGrid{s.pool_pages() * s.hkv * s.page, s.d};
  };
  f.reference_at = [](const Problem& p, const Buffers& b, const std::string& output,
                      const std::vector<int64_t>& index, RefOutput& out) {
    const Dims s = dims_of(p);
    const int64_t per_token = s.hq + s.hkv;
    out.value.resize(index.size());
    out.magnitude.assign(index.size(), 0.0);
    if (output == "q_out") {
      // Element e of q_out is (token, head) row e / D; its reference row t * per_token + head.
      auto row_of = [&](int64_t e) { return e / (s.hq * s.d) * per_token + e / s.d % s.hq; };
      const std::vector<int64_t> rows = sampled_rows(index, row_of);
      std::vector<HeadReference> heads;
      reference_heads(s, b, rows, heads);
      for (size_t i = 0; i < index.size(); ++i) {
        const HeadReference& r = heads[row_position(rows, row_of(index[i]))];
        out.value[i] = r.out[index[i] % s.d];
        out.magnitude[i] = r.bound[index[i] % s.d];
      }
      return;
    }
    const bool is_k = output == "k_cache";
    const Tensor& in = b[output];
    const std::vector<int64_t> writer = slot_writers(s, b);
    // Pool row r (of D) holds KV head (r / P) % Hkv of slot (r / (Hkv P)) P + r % P.
    auto token_of = [&](int64_t r) { return writer[r / (s.hkv * s.page) * s.page + r % s.page]; };
    auto head_of = [&](int64_t r) { return r / s.page % s.hkv; };
    std::vector<int64_t> rows;  // the k rows to compute, as reference rows
    for (int64_t e : index)
      if (const int64_t t = token_of(e / s.d); is_k && t >= 0)
        rows.push_back(t * per_token + s.hq + head_of(e / s.d));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    std::vector<HeadReference> heads;
    reference_heads(s, b, rows, heads);
    const PoolElements pool_element(b);
    for (size_t i = 0; i < index.size(); ++i) {
      const int64_t r = index[i] / s.d, c = index[i] % s.d, t = token_of(r);
      if (t < 0) {
        out.value[i] = in.host_at(index[i]);
      } else if (is_k) {
        const HeadReference& h = heads[row_position(rows, t * per_token + s.hq + head_of(r))];
        pool_element(false, head_of(r), h.out[c], h.bound[c], out.value[i], out.magnitude[i]);
      } else {
        pool_element(true, head_of(r),
                     b["qkv"].host_at((t * s.heads() + s.hq + s.hkv + head_of(r)) * s.d + c), 0,
                     out.value[i], out.magnitude[i]);
      }
    }
  };
  return f;
}

}  // namespace klab::qk_norm_rope_cache

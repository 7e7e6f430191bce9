// The qk_norm_rope_cache family: its fp64 reference on a head computed by hand (the norm, both
// rotate-half pairs, the cache slot, v unchanged, the pools' other slots as they were), the
// rungs' reduced rotary phase against a long-double angle up to position 2^20, the builders
// (positions as asked, slot_mapping from valid block tables, decode_attention's page layout, no
// slot shared, the skips), the sampled reference against the whole one, the counts, the shapes
// and dimensions it takes, the GPU rungs' refusals, the CPU rung at every awkward shape, and
// checks that catch wrong rungs (a wrong theta, a position off by one, fp32 angles at long
// contexts, a k_norm without its weight, a token written to a wrong slot, a sentinel
// overwritten, v an ulp off, a q row left unwritten).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <set>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "kernels/qk_norm_rope_cache/rope.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/runner.hpp"
#include "tests/cpu/drawn_buffers.hpp"
#include "tests/cpu/sampled_reference_check.hpp"

using namespace klab;
using qk_norm_rope_cache::Dims;

namespace {

const Family& family() { return registry().family("qk_norm_rope_cache"); }

Problem shape(int64_t tokens, int64_t hq, int64_t hkv, int64_t d, int64_t page, int64_t seqs,
              int64_t context, int64_t skip = 0, int64_t zero_rows = 0, int64_t amp = 1) {
  return qk_norm_rope_cache::problem(
      Dims{tokens, hq, hkv, d, page, seqs, context, skip, zero_rows, amp});
}

Buffers host_buffers(const Problem& p, uint64_t seed) {
  return test::drawn_host_buffers(family(), p, seed);
}

Reference whole(const Problem& p, const Buffers& b) {
  Reference r;
  family().reference(p, b, r);
  return r;
}

int64_t at(const Buffers& b, const char* name, int64_t i) {
  return static_cast<int64_t>(b[name].host_at(i));
}

void set(Buffers& b, const char* name, int64_t i, double v) {
  store_from_double(b[name].host.data(), b[name].spec.dtype, i, v);
}

const double kSentinel = bf16_bits_to_float(qk_norm_rope_cache::kSentinelBits);

}  // namespace

// One token, one q head and one k head of D = 4: pairs (0, 2) at angle pos and (1, 3) at
// pos * theta^(-1/2) = pos / 1000; k to its slot, v copied, every other pool element unchanged.
TEST(QkNormRopeCache, ReferenceByHand) {
  const Problem p = shape(1, 1, 1, 4, 2, 1, 2);
  const Dims s = qk_norm_rope_cache::dims_of(p);
  ASSERT_EQ(s.pool_pages(), 2);  // one page the token may touch, one spare
  Buffers b = host_buffers(p, 5);
  const double x[3][4] = {{1, 2, 3, 4}, {-2, 0.5, 0, 1}, {7, 8, 9, 10}};  // q, k, v
  const double wq[4] = {1, 0.5, 2, 1}, wk[4] = {0.25, 1, 1, -1};
  for (int h = 0; h < 3; ++h)
    for (int i = 0; i < 4; ++i) set(b, "qkv", h * 4 + i, x[h][i]);
  for (int i = 0; i < 4; ++i) {
    set(b, "q_weight", i, wq[i]);
    set(b, "k_weight", i, wk[i]);
  }
  for (const double pos : {0.0, 1.0, 1234.0}) {
    set(b, "positions", 0, pos);
    set(b, "slot_mapping", 0, 3);  // page 1, offset 1
    const Reference r = whole(p, b);
    for (int h = 0; h < 2; ++h) {
      const double* w = h == 0 ? wq : wk;
      double ss = 0;
      for (double v : x[h]) ss += v * v;
      const double inv = 1 / std::sqrt(ss / 4 + 1e-6);
      double y[4];
      for (int i = 0; i < 4; ++i) y[i] = x[h][i] * inv * w[i];
      const double a0 = pos, a1 = pos / 1000;
      const double want[4] = {
          y[0] * std::cos(a0) - y[2] * std::sin(a0), y[1] * std::cos(a1) - y[3] * std::sin(a1),
          y[2] * std::cos(a0) + y[0] * std::sin(a0), y[3] * std::cos(a1) + y[1] * std::sin(a1)};
      // k of slot 3 (page 1, offset 1 of P = 2, one KV head): elements ((1 * 1 + 0) * 2 + 1) * 4.
      const std::vector<double>& got = h == 0 ? r.at("q_out").value : r.at("k_cache").value;
      const int64_t base = h == 0 ? 0 : 12;
      for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[base + i], want[i], 1e-12) << pos << " " << i;
      for (int i = 0; pos == 0 && i < 4; ++i) EXPECT_NEAR(got[base + i], y[i], 1e-15);  // no turn
    }
    const auto& k = r.at("k_cache").value;
    const auto& v = r.at("v_cache").value;
    for (int64_t e = 0; e < 16; ++e) {
      const bool written = e >= 12;
      EXPECT_EQ(v[e], written ? x[2][e - 12] : kSentinel) << e;
      EXPECT_TRUE(written || k[e] == kSentinel) << e;
      EXPECT_EQ(r.at("k_cache").magnitude[e] > 0, written) << e;  // 0: exact
    }
  }
  // A skipped token: q as before, the pools untouched.
  set(b, "slot_mapping", 0, -1);
  const Reference r = whole(p, b);
  for (int64_t e = 0; e < 16; ++e) {
    EXPECT_EQ(r.at("k_cache").value[e], kSentinel);
    EXPECT_EQ(r.at("v_cache").value[e], kSentinel);
  }
}

// A zero head normalises to 0 (0 * rsqrt(eps)) and rotates to 0: no NaN.
TEST(QkNormRopeCache, ZeroRowsGiveZeros) {
  const Problem p = shape(9, 4, 4, 64, 16, 3, 20, 0, /*zero_rows*/ 9);
  const Buffers b = host_buffers(p, 9);
  const Reference r = whole(p, b);
  for (double v : r.at("q_out").value) EXPECT_EQ(v, 0.0);
  int written = 0;
  for (size_t e = 0; e < r.at("k_cache").value.size(); ++e)
    if (r.at("k_cache").value[e] != kSentinel) {
      EXPECT_EQ(r.at("k_cache").value[e], 0.0);
      EXPECT_EQ(r.at("v_cache").value[e], 0.0);
      ++written;
    }
  EXPECT_EQ(written, 9 * 4 * 64);
}

// rope.hpp's constants, and its phase against the angle in long double: within 2^-29
// half-turns at every position below 2^20 (its derivation), before the rounding to fp32.
TEST(QkNormRopeCache, ReducedPhaseMatchesTheAngle) {
  using namespace qk_norm_rope_cache;
  EXPECT_NEAR(kLog2Theta, std::log2(kTheta), 4e-15);
  EXPECT_NEAR(kLog2Pi, std::log2(std::numbers::pi), 4e-16);
  const long double pi = std::numbers::pi_v<long double>;
  double worst = 0;
  for (int d : {64, 128, 256})
    for (int32_t pos : {0, 1, 2, 15, 16, 1000, 4095, 65537, 131071, 524287, 1048575})
      for (int i = 0; i < d / 2; ++i) {
        const long double angle = pos * std::pow(1e6L, -2.0L * i / d);
        long double want = std::fmod(angle / pi, 2.0L);  // in [0, 2)
        double got = rope_half_turns(pos, i, d);
        ASSERT_LE(std::fabs(got), 1.0);
        long double diff = std::fabs(static_cast<long double>(got) - want);
        diff = std::min(diff, 2 - diff);  // the same angle, one turn apart
        worst = std::max(worst, static_cast<double>(diff));
      }
  EXPECT_LT(worst, std::ldexp(1.0, -29));
  EXPECT_LT(cos_sin_error_bound(), 4.1 * std::ldexp(1.0, -24));
}

// Positions: T / seqs new tokens per sequence, consecutive, ending at a length in [n, context];
// one sequence ends at context - 1. slot_mapping: slot = table[seq][pos / P] * P + pos % P from
// the block table of the same seed (pages from the pool, none shared), every slot distinct,
// exactly `skip` tokens at -1.
// The GPU table's layout: a permutation of the D / 2 slots, and each lane's quarter (four pairs
// 8 l + 4 q ..) one aligned float4 at (q * lanes + l) * 4, so that the 8 lanes of a quarter read
// 32 consecutive words.
TEST(QkNormRopeCache, RopeTableSlotsArePermutationOfQuarters) {
  for (int d : {16, 32, 64, 128, 256, 512}) {
    const int half = d / 2, lanes = half / 8;
    std::vector<int> seen(static_cast<size_t>(half), 0);
    for (int i = 0; i < half; ++i) {
      const int s = qk_norm_rope_cache::rope_slot(i, half);
      ASSERT_GE(s, 0);
      ASSERT_LT(s, half);
      ++seen[static_cast<size_t>(s)];
      const int l = i / 8, q = (i % 8) / 4;
      EXPECT_EQ(s, (q * lanes + l) * 4 + i % 4) << "d " << d << " pair " << i;
    }
    for (int s = 0; s < half; ++s) EXPECT_EQ(seen[static_cast<size_t>(s)], 1) << "d " << d;
  }
}

TEST(QkNormRopeCache, BuiltPositionsAndSlotsAreValid) {
  for (const Problem& p :
       {shape(1000, 8, 2, 64, 16, 7, 5000, 13), shape(17, 4, 1, 64, 1, 3, 17),
        shape(5, 8, 2, 128, 64, 2, 131072), shape(64, 4, 4, 64, 16, 64, 4096, 64)})
    for (uint64_t seed : {1u, 2u, 3u}) {
      const Dims s = qk_norm_rope_cache::dims_of(p);
      const Buffers b = host_buffers(p, seed);
      // host_buffers gives each tensor seed + its place (positions 4th, slot_mapping 5th).
      const std::vector<int32_t> table =
          qk_norm_rope_cache::build_block_table(s, b["positions"], seed + 5);
      std::set<int64_t> slots, pages;
      int64_t skipped = 0, longest = 0;
      for (int64_t q = 0; q < s.seqs; ++q) {
        const int64_t first = s.first_token(q), n = s.new_tokens(q);
        const int64_t end = at(b, "positions", first + n - 1) + 1;
        EXPECT_GE(end, n);
        EXPECT_LE(end, s.context);
        longest = std::max(longest, end);
        for (int64_t t = first; t < first + n; ++t) {
          const int64_t pos = at(b, "positions", t);
          EXPECT_EQ(pos, end - n + (t - first));
          const int64_t slot = at(b, "slot_mapping", t);
          if (slot < 0) {
            ++skipped;
            continue;
          }
          const int64_t page = table[q * s.table_cols() + pos / s.page];
          ASSERT_GE(page, 0);
          ASSERT_LT(page, s.pool_pages());
          EXPECT_EQ(slot, page * s.page + pos % s.page);
          EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " twice";
        }
        for (int64_t k = 0; k < s.table_cols(); ++k)
          if (const int32_t page = table[q * s.table_cols() + k]; page >= 0) {
            EXPECT_TRUE(pages.insert(page).second) << "page " << page << " shared";
          }
      }
      EXPECT_EQ(longest, s.context);
      EXPECT_EQ(skipped, s.skip);
      EXPECT_LT(static_cast<int64_t>(pages.size()), s.pool_pages());  // spare pages
    }
}

// decode_attention's HND pages: token j of a sequence, KV head h, at ((table[j / P] * Hkv + h) *
// P + j % P) * D (kernels/decode_attention/family.cpp, reference_row).
TEST(QkNormRopeCache, PoolLayoutIsDecodeAttentions) {
  using qk_norm_rope_cache::pool_offset;
  const int64_t hkv = 8, page = 16, d = 128;
  for (int64_t pool_page : {0, 1, 57})
    for (int64_t j : {0, 15, 16, 1000})
      for (int64_t h : {0, 7}) {
        const int64_t slot = pool_page * page + j % page;
        EXPECT_EQ(pool_offset(slot, h, hkv, page, d),
                  ((pool_page * hkv + h) * page + j % page) * d);
      }
  EXPECT_EQ(pool_offset(1, 0, 1, 1, 4), 4);  // one-token pages: slot = page
}

TEST(QkNormRopeCache, SampledReferenceMatchesTheWhole) {
  const Family& f = family();
  for (const Problem& p :
       {shape(37, 8, 2, 64, 16, 3, 300, 4, 2), shape(29, 10, 2, 128, 1, 2, 5000)}) {
    const Buffers b = host_buffers(p, 21);
    tests::expect_sampled_reference_matches_whole(f, p, b, whole(p, b),
                                                  {"q_out", "k_cache", "v_cache"}, 5);
  }
}

TEST(QkNormRopeCache, CountsEachTensorOnce) {
  const Counts c = family().counts(shape(16, 32, 8, 128, 16, 16, 4096));
  const double head = 128 * 2;                                     // bytes
  EXPECT_EQ(c.bytes, 16 * (48 + 48) * head + 2 * head + 16 * 12);  // heads in, heads out
  EXPECT_EQ(c.flops, 7.0 * 128 * 16 * 40);
  // Skipped tokens read and write no k or v.
  const Counts skip = family().counts(shape(16, 32, 8, 128, 16, 16, 4096, 4));
  EXPECT_EQ(c.bytes - skip.bytes, 4 * 32 * head);
  EXPECT_EQ(c.flops - skip.flops, 7.0 * 128 * 4 * 8);
}

TEST(QkNormRopeCache, ShapesAndDimensions) {
  const Family& f = family();
  ASSERT_EQ(f.headline.size(), 8u);  // bf16 pools, then the same shapes with e4m3 pools
  std::set<int64_t> tokens;
  for (size_t i = 0; i < f.headline.size(); ++i) {
    const Problem& p = f.headline[i];
    EXPECT_EQ(p.dim("hq"), 32);
    EXPECT_EQ(p.dim("hkv"), 8);
    EXPECT_EQ(p.dim("d"), 128);
    EXPECT_EQ(p.dtype, i < 4 ? DType::bf16 : DType::e4m3);
    if (i >= 4) {
      EXPECT_EQ(p.shape.str(), f.headline[i - 4].shape.str());
    }
    tokens.insert(p.dim("tokens"));
  }
  EXPECT_EQ(tokens, (std::set<int64_t>{1, 16, 4096, 16384}));
  std::set<int64_t> counts, pages, ds, groups;
  bool long_context = false, some_skip = false, all_skip = false, zero = false, all_zero = false,
       amp = false;
  for (const Problem& p : f.awkward) {
    if (p.dtype != DType::bf16) continue;  // e4m3 pools: QkNormRopeCacheE4m3.AwkwardShapes
    EXPECT_NO_THROW(f.validate(p)) << p.str();
    const Dims s = qk_norm_rope_cache::dims_of(p);
    counts.insert(s.tokens);
    pages.insert(s.page);
    ds.insert(s.d);
    groups.insert(s.hq / s.hkv);
    long_context |= s.context == 131072;
    some_skip |= s.skip > 0 && s.skip < s.tokens;
    all_skip |= s.skip == s.tokens;
    zero |= s.zero_rows > 0 && s.zero_rows < s.tokens;
    all_zero |= s.zero_rows == s.tokens;
    amp |= s.amp >= (int64_t(1) << 30);
    EXPECT_FALSE(f.sampled(p)) << p.str();  // judged whole, and small enough for the GPU tests
    EXPECT_LT(f.counts(p).bytes, 2.56e8) << p.str();
  }
  for (int64_t t : {1, 3, 17, 1000}) EXPECT_TRUE(counts.count(t)) << t;
  for (int64_t pg : {1, 16, 64}) EXPECT_TRUE(pages.count(pg)) << pg;
  for (int64_t d : {64, 128, 256}) EXPECT_TRUE(ds.count(d)) << d;
  for (int64_t g : {1, 4, 5}) EXPECT_TRUE(groups.count(g)) << g;
  EXPECT_TRUE(long_context && some_skip && all_skip && zero && all_zero && amp);
  // Left-out dimensions take their defaults; bad requests are one-line usage errors.
  const Problem p = make_problem(f, "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=2,context=64", "bf16");
  EXPECT_EQ(p.dim("skip"), 0);
  EXPECT_EQ(p.dim("zero_rows"), 0);
  EXPECT_EQ(p.dim("amp"), 1);
  for (const char* bad : {"tokens=3,hq=8,hkv=3,d=128,page=16,seqs=2,context=64",  // hq % hkv
                          "tokens=3,hq=8,hkv=2,d=127,page=16,seqs=2,context=64",  // odd d
                          "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=4,context=64",  // seqs > tokens
                          "tokens=9,hq=8,hkv=2,d=128,page=16,seqs=1,context=8",   // 9 > context
                          "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=1,context=2000000",
                          "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=1,context=64,skip=4",
                          "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=1,context=64,amp=3"})
    EXPECT_THROW(make_problem(f, bad, "bf16"), UsageError) << bad;
  EXPECT_THROW(make_problem(f, "tokens=3,hq=8,hkv=2,d=128,page=16,seqs=1,context=64", "f32"),
               UsageError);
}

TEST(QkNormRopeCache, ToleranceDerivation) {
  const Problem p = shape(16, 32, 8, 128, 16, 16, 4096);
  const Family& f = family();
  // e_y = 2^-8 + (64 + 8) u32 at D = 128.
  EXPECT_NEAR(qk_norm_rope_cache::y_error_bound(128), 3.91e-3, 1e-5);
  const Tolerance q = f.output_tolerance(p, "q_out");
  EXPECT_EQ(q.atol + q.rtol, 0.0);  // everything in the per-element bound: exact where it is 0
  EXPECT_EQ(q.mtol, 1.0);
  EXPECT_NEAR(q.max_rel_l2, 1.18e-2, 1e-4);  // u_bf16 + 2 (1 + u_bf16) e
  const Tolerance v = f.output_tolerance(p, "v_cache");
  EXPECT_EQ(v.atol + v.rtol + v.mtol + v.max_rel_l2, 0.0);
}

// The GPU rungs refuse what they cannot run, with a reason (registered in the CUDA build only).
TEST(QkNormRopeCache, GpuRungsRefuseWithAReason) {
  const Family& f = family();
  for (const char* id : {"qk_norm_rope_cache.v01_fused", "qk_norm_rope_cache.baseline_unfused"}) {
    const Variant* v = f.find(id);
    if (!v) GTEST_SKIP() << "CPU-only build";
    for (const Problem& p : f.headline) EXPECT_TRUE(v->can_implement(p).ok()) << p.str();
    for (const Problem& p : f.awkward) EXPECT_TRUE(v->can_implement(p).ok()) << p.str();
    EXPECT_NE(v->can_implement(shape(3, 8, 2, 96, 16, 1, 64)).reason.find("d must be"),
              std::string::npos);
    EXPECT_TRUE(v->can_implement(shape(3, 8, 2, 512, 16, 1, 64)).ok());  // a warp per head
    EXPECT_FALSE(v->can_implement(shape(3, 8, 2, 1024, 16, 1, 64)).ok());
    Problem mis = shape(3, 8, 2, 128, 16, 1, 64);
    mis.misalign = 1;
    EXPECT_FALSE(v->can_implement(mis).ok());
  }
}

// v07 splits each row over three blocks: it takes every headline shape, and refuses head counts
// that would leave a part empty (4 heads: parts of 2, 2 and none) with a reason.
TEST(QkNormRopeCache, HeadPartsRefuseAnEmptyPart) {
  const Variant* v = family().find("qk_norm_rope_cache.v07_head_parts");
  if (!v) GTEST_SKIP() << "CPU-only build";
  for (const Problem& p : family().headline) EXPECT_TRUE(v->can_implement(p).ok()) << p.str();
  EXPECT_TRUE(v->can_implement(shape(3, 4, 1, 64, 16, 1, 64)).ok());  // 6 heads: 2, 2, 2
  const Status empty = v->can_implement(shape(3, 2, 1, 64, 16, 1, 64));
  EXPECT_FALSE(empty.ok());
  EXPECT_NE(empty.reason.find("empty"), std::string::npos) << empty.reason;
}

namespace {

Result check(const Variant& v, const Problem& p, std::vector<Dist> dists = {Dist::normal}) {
  RunOptions opt;
  opt.bench = false;
  opt.seed = 7;
  opt.dists = std::move(dists);
  return run_variant(family(), v, p, opt);
}

const Variant& cpu_rung() { return *family().find("qk_norm_rope_cache.v00_cpu"); }

}  // namespace

TEST(QkNormRopeCache, CpuRungPassesAtEveryAwkwardShape) {
  for (const Problem& p : family().awkward) {
    const Result r = check(cpu_rung(), p);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_TRUE(r.check.passed) << p.str() << ": " << r.check.summary();
  }
  const Result r = check(cpu_rung(), shape(17, 8, 2, 128, 16, 3, 1000, 5),
                         {Dist::normal, Dist::uniform, Dist::heavy});
  EXPECT_TRUE(r.check.passed) << r.check.summary();
}

namespace {

// A rung wrong in one way: v00, with its inputs changed before (`before`, undone after) or its
// outputs spoilt after (`after`).
Variant wrong(std::function<void(const Dims&, Buffers&)> before,
              std::function<void(const Dims&, Buffers&)> after) {
  Variant v = cpu_rung();
  v.launch = [good = cpu_rung(), before, after](const Problem& p, Buffers& b, const LaunchArgs& a) {
    const Dims s = qk_norm_rope_cache::dims_of(p);
    std::vector<Tensor> saved;
    for (const char* in : {"q_weight", "k_weight", "positions"}) saved.push_back(b[in]);
    if (before) before(s, b);
    good.launch(p, b, a);
    for (const Tensor& t : saved)
      std::copy(t.host.begin(), t.host.end(), b[t.spec.name].host.begin());
    if (after) after(s, b);
  };
  return v;
}

// Rotates each pair (i, i + D/2) of q_out by a further extra(pos, i, d) radians: the rung that
// computes its angles that way (a wrong theta, a position off by one, fp32 angles).
Variant extra_rotation(std::function<double(int32_t, int, int)> extra) {
  return wrong(nullptr, [extra](const Dims& s, Buffers& b) {
    const int64_t half = s.d / 2;
    for (int64_t t = 0; t < s.tokens; ++t) {
      const auto pos = static_cast<int32_t>(at(b, "positions", t));
      for (int64_t h = 0; h < s.hq; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const double a = extra(pos, static_cast<int>(i), static_cast<int>(s.d));
          const int64_t e = (t * s.hq + h) * s.d + i;
          const double lo = b["q_out"].host_at(e), hi = b["q_out"].host_at(e + half);
          set(b, "q_out", e, lo * std::cos(a) - hi * std::sin(a));
          set(b, "q_out", e + half, hi * std::cos(a) + lo * std::sin(a));
        }
    }
  });
}

// The last pool slot no token writes.
int64_t unwritten_slot(const Dims& s, const Buffers& b) {
  std::set<int64_t> written;
  for (int64_t t = 0; t < s.tokens; ++t) written.insert(at(b, "slot_mapping", t));
  int64_t slot = s.pool_pages() * s.page - 1;
  while (written.count(slot)) --slot;
  return slot;
}

double angle(int32_t pos, int i, int d, double theta) {
  return pos * std::pow(theta, -2.0 * i / d);
}

}  // namespace

// A test must be able to fail: each wrong rung fails the check where the right one passes.
TEST(QkNormRopeCache, ChecksCatchWrongRungs) {
  const Problem p = shape(17, 8, 2, 128, 16, 3, 1000, 2);
  const Problem long_context = shape(64, 8, 2, 128, 16, 1, 131072);  // 131008 .. 131071
  ASSERT_TRUE(check(wrong(nullptr, nullptr), p).check.passed);
  ASSERT_TRUE(check(wrong(nullptr, nullptr), long_context).check.passed);
  // The rotation re-rounded to bf16 by extra_rotation alone stays within the bound.
  ASSERT_TRUE(check(extra_rotation([](int32_t, int, int) { return 0.0; }), p).check.passed);

  const Variant theta_1e4 = extra_rotation(
      [](int32_t pos, int i, int d) { return angle(pos, i, d, 1e4) - angle(pos, i, d, 1e6); });
  const Variant position_plus_one =
      extra_rotation([](int32_t, int i, int d) { return angle(1, i, d, 1e6); });
  // sincosf(float(pos) * inv_freq) with inv_freq rounded to fp32: right at short contexts, wrong
  // by ~1% of |y| near position 131071 (rope.hpp).
  const Variant fp32_angle = extra_rotation([](int32_t pos, int i, int d) {
    const float inv_freq = static_cast<float>(std::pow(1e6, -2.0 * i / d));
    return static_cast<double>(static_cast<float>(pos) * inv_freq) - angle(pos, i, d, 1e6);
  });
  const Variant no_k_weight = wrong(
      [](const Dims& s, Buffers& b) {
        for (int64_t i = 0; i < s.d; ++i) set(b, "k_weight", i, 1.0);
      },
      nullptr);
  // The first written token's k and v rows moved to a slot no token writes, the pool's value
  // restored where they belonged.
  const Variant wrong_slot = wrong(nullptr, [](const Dims& s, Buffers& b) {
    int64_t t = 0;
    while (at(b, "slot_mapping", t) < 0) ++t;
    const int64_t slot = at(b, "slot_mapping", t), to = unwritten_slot(s, b);
    for (const char* pool : {"k_cache", "v_cache"})
      for (int64_t h = 0; h < s.hkv; ++h)
        for (int64_t i = 0; i < s.d; ++i) {
          using qk_norm_rope_cache::pool_offset;
          const int64_t src = pool_offset(slot, h, s.hkv, s.page, s.d) + i;
          set(b, pool, pool_offset(to, h, s.hkv, s.page, s.d) + i, b[pool].host_at(src));
          set(b, pool, src, kSentinel);
        }
  });
  const Variant sentinel_overwritten = wrong(nullptr, [](const Dims& s, Buffers& b) {
    const int64_t e = qk_norm_rope_cache::pool_offset(unwritten_slot(s, b), 0, s.hkv, s.page, s.d);
    set(b, "k_cache", e, 0.0);
  });
  const Variant v_ulp_off = wrong(nullptr, [](const Dims& s, Buffers& b) {
    int64_t t = 0;
    while (at(b, "slot_mapping", t) < 0) ++t;
    const int64_t e =
        qk_norm_rope_cache::pool_offset(at(b, "slot_mapping", t), 0, s.hkv, s.page, s.d);
    const double v = b["v_cache"].host_at(e);
    set(b, "v_cache", e, v + std::ldexp(std::fabs(v), -7));
  });
  const Variant q_row_unwritten = wrong(nullptr, [](const Dims& s, Buffers& b) {
    fill_poison(b["q_out"].host.data() + (s.tokens - 1) * s.hq * s.d * 2, s.d * 2);
  });
  struct Case {
    const char* what;
    const Variant* v;
    const Problem* p;
  };
  for (const Case& c :
       {Case{"theta 1e4", &theta_1e4, &p}, Case{"pos + 1", &position_plus_one, &p},
        Case{"fp32 angle", &fp32_angle, &long_context}, Case{"no k weight", &no_k_weight, &p},
        Case{"wrong slot", &wrong_slot, &p}, Case{"sentinel", &sentinel_overwritten, &p},
        Case{"v ulp", &v_ulp_off, &p}, Case{"q unwritten", &q_row_unwritten, &p}}) {
    const Result r = check(*c.v, *c.p);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_FALSE(r.check.passed) << c.what << ": " << r.check.summary();
  }
  EXPECT_GT(check(q_row_unwritten, p).check.unwritten, 0);
  // fp32 angles pass where positions stay small: the long context is what catches them.
  EXPECT_TRUE(check(fp32_angle, shape(17, 8, 2, 128, 16, 3, 64)).check.passed);
}

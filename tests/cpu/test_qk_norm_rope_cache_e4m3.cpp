// The qk_norm_rope_cache family with e4m3 pools (issue 15's FP8 cache write): the quantised
// reference by hand (the value over its head's scale, saturated at +-448, and its bound), the
// whole reference against the bf16 problem's on the same inputs, the scales as inputs, the
// counts, the e4m3 shapes among the awkward ones, the tolerances, the CPU rung at every e4m3
// awkward shape, and checks that catch wrong rungs (no scale, the other pool's scale, k one e4m3
// step off, v left in the wrong pool's units, a sentinel overwritten).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "kernels/register.hpp"
#include "klab/harness/runner.hpp"
#include "tests/cpu/drawn_buffers.hpp"
#include "tests/cpu/sampled_reference_check.hpp"

using namespace klab;
using qk_norm_rope_cache::Dims;

namespace {

const Family& family() { return registry().family("qk_norm_rope_cache"); }

Problem e4m3(int64_t tokens, int64_t hq, int64_t hkv, int64_t d, int64_t page, int64_t seqs,
             int64_t context, int64_t skip = 0, int64_t zero_rows = 0, int64_t amp = 1) {
  return qk_norm_rope_cache::problem(
      Dims{tokens, hq, hkv, d, page, seqs, context, skip, zero_rows, amp}, DType::e4m3);
}

Problem as_bf16(Problem p) {
  p.dtype = DType::bf16;
  return p;
}

Reference whole(const Problem& p, const Buffers& b) {
  Reference r;
  family().reference(p, b, r);
  return r;
}

constexpr double kU32 = 1.0 / (1 << 24);

}  // namespace

// q = clamp(x / scale, +-448); bound (1 + 2^-4) pre_q + 2^-4 |q| + 2^-10 with pre_q = (pre +
// 3 u32 (|x| + pre)) / scale.
TEST(QkNormRopeCacheE4m3, QuantisedReferenceByHand) {
  using qk_norm_rope_cache::quantised_reference;
  const auto a = quantised_reference(3.0, 0.0, 0.5);
  EXPECT_EQ(a.value, 6.0);
  EXPECT_NEAR(a.bound, (1 + 1.0 / 16) * 3 * kU32 * 3 / 0.5 + 6.0 / 16 + 1.0 / 1024, 1e-15);
  const auto b = quantised_reference(-1.0, 0.01, 2.0);
  EXPECT_EQ(b.value, -0.5);
  EXPECT_NEAR(b.bound, (1 + 1.0 / 16) * (0.01 + 3 * kU32 * 1.01) / 2 + 0.5 / 16 + 1.0 / 1024,
              1e-15);
  // Saturation: both signs clamp at 448, and the bound is taken from the clamped value.
  EXPECT_EQ(quantised_reference(1e6, 0, 1).value, 448.0);
  EXPECT_EQ(quantised_reference(-1e6, 0, 0.25).value, -448.0);
  EXPECT_LT(quantised_reference(1e6, 0, 1).bound, 448.0 / 16 + 1);
  // Zero stays zero, within half the subnormal step.
  EXPECT_EQ(quantised_reference(0, 0, 1).value, 0.0);
  EXPECT_EQ(quantised_reference(0, 0, 1).bound, 1.0 / 1024);
}

// The e4m3 problem draws the same qkv, positions and slots as the bf16 one of its seed, adds the
// scales (Hkv fp32 each, powers 2^[-2, 1]), and its reference is the bf16 reference quantised:
// written elements over their head's scale, the rest the e4m3 sentinel (-28), exact.
TEST(QkNormRopeCacheE4m3, ReferenceIsTheBf16OneQuantised) {
  const Problem p = e4m3(17, 8, 2, 128, 16, 3, 1000, 2);
  const Buffers b = test::drawn_host_buffers(family(), p, 11);
  const Buffers b16 = test::drawn_host_buffers(family(), as_bf16(p), 11);
  for (const char* in : {"qkv", "positions", "slot_mapping"})
    ASSERT_EQ(b[in].host, b16[in].host) << in;
  EXPECT_EQ(b["k_cache"].spec.dtype, DType::e4m3);
  EXPECT_EQ(b["q_out"].spec.dtype, DType::bf16);
  std::set<double> scales;
  for (const char* name : {"k_scale", "v_scale"}) {
    ASSERT_EQ(b[name].spec.numel, 2);
    ASSERT_EQ(b[name].spec.role, Role::input);
    for (int64_t h = 0; h < 2; ++h) {
      const double sc = b[name].host_at(h);
      EXPECT_GE(sc, 0.25);
      EXPECT_LE(sc, 2.0);
      scales.insert(sc);
    }
  }
  EXPECT_EQ(scales.size(), 4u);  // no two alike: a rung taking another's scale is off
  const Reference r = whole(p, b), r16 = whole(as_bf16(p), b16);
  EXPECT_EQ(r.at("q_out").value, r16.at("q_out").value);
  const Dims s = qk_norm_rope_cache::dims_of(p);
  const double sentinel = e4m3_bits_to_float(qk_norm_rope_cache::kSentinelE4m3);
  EXPECT_EQ(sentinel, -28.0);
  const double sentinel16 = bf16_bits_to_float(qk_norm_rope_cache::kSentinelBits);
  int64_t written = 0;
  for (const char* pool : {"k_cache", "v_cache"}) {
    const RefOutput& q = r.at(pool);
    const RefOutput& x = r16.at(pool);
    ASSERT_EQ(q.value.size(), x.value.size());
    for (size_t e = 0; e < q.value.size(); ++e) {
      const int64_t h = static_cast<int64_t>(e) / (s.page * s.d) % s.hkv;
      if (q.magnitude[e] == 0) {  // untouched (a written element's bound is at least 2^-10)
        EXPECT_EQ(q.value[e], sentinel) << pool << " " << e;
        EXPECT_EQ(x.value[e], sentinel16) << pool << " " << e;
        continue;
      }
      ++written;
      const double sc = b[pool == std::string("k_cache") ? "k_scale" : "v_scale"].host_at(h);
      EXPECT_NEAR(q.value[e], x.value[e] / sc, 1e-12 * std::fabs(x.value[e] / sc)) << pool << e;
      EXPECT_GT(q.magnitude[e], std::fabs(q.value[e]) / 16) << pool << " " << e;
    }
  }
  EXPECT_EQ(written, 2 * (17 - 2) * 2 * 128);  // k and v of the 15 written tokens' two heads
}

TEST(QkNormRopeCacheE4m3, SampledReferenceMatchesTheWhole) {
  const Problem p = e4m3(37, 8, 2, 64, 16, 3, 300, 4, 2, int64_t(1) << 20);
  const Buffers b = test::drawn_host_buffers(family(), p, 21);
  tests::expect_sampled_reference_matches_whole(family(), p, b, whole(p, b),
                                                {"q_out", "k_cache", "v_cache"}, 5);
}

// k and v are written in one byte an element; the scales read once.
TEST(QkNormRopeCacheE4m3, CountsTheNarrowerPools) {
  const Problem p = e4m3(16, 32, 8, 128, 16, 16, 4096, 4);
  const Counts c = family().counts(p), c16 = family().counts(as_bf16(p));
  EXPECT_EQ(c.flops, c16.flops);
  EXPECT_EQ(c16.bytes - c.bytes, (16 - 4) * 2 * 8 * 128.0 - 2 * 8 * 4);
}

TEST(QkNormRopeCacheE4m3, AwkwardShapes) {
  std::set<int64_t> counts, pages;
  bool skip = false, zero = false, amp = false, long_context = false, qwen = false;
  for (const Problem& p : family().awkward) {
    if (p.dtype != DType::e4m3) continue;
    EXPECT_NO_THROW(family().validate(p)) << p.str();
    const Dims s = qk_norm_rope_cache::dims_of(p);
    counts.insert(s.tokens);
    pages.insert(s.page);
    skip |= s.skip > 0;
    zero |= s.zero_rows > 0;
    amp |= s.amp >= (int64_t(1) << 30);
    long_context |= s.context == 131072;
    qwen |= s.hq == 32 && s.hkv == 8;
    EXPECT_FALSE(family().sampled(p)) << p.str();
  }
  for (int64_t t : {1, 3, 17, 1000}) EXPECT_TRUE(counts.count(t)) << t;
  for (int64_t pg : {1, 16, 64}) EXPECT_TRUE(pages.count(pg)) << pg;
  EXPECT_TRUE(skip && zero && amp && long_context && qwen);
}

TEST(QkNormRopeCacheE4m3, ToleranceDerivation) {
  const Problem p = e4m3(16, 32, 8, 128, 16, 16, 4096);
  const Tolerance k = family().output_tolerance(p, "k_cache");
  const Tolerance v = family().output_tolerance(p, "v_cache");
  const Tolerance q = family().output_tolerance(p, "q_out");
  for (const Tolerance& t : {k, v}) {
    EXPECT_EQ(t.atol + t.rtol, 0.0);  // every element's bound its own; 0 where untouched: exact
    EXPECT_EQ(t.mtol, 1.0);
  }
  EXPECT_NEAR(v.max_rel_l2, 1.0 / 16 + 1.0 / 256, 1e-15);
  EXPECT_NEAR(k.max_rel_l2, 1.0 / 16 + 1.0 / 256 + (1 + 1.0 / 16) * (q.max_rel_l2 + 3 * kU32),
              1e-15);
  EXPECT_EQ(q.max_rel_l2, family().output_tolerance(as_bf16(p), "q_out").max_rel_l2);
}

namespace {

Result check(const Variant& v, const Problem& p) {
  RunOptions opt;
  opt.bench = false;
  opt.seed = 7;
  return run_variant(family(), v, p, opt);
}

const Variant& cpu_rung() { return *family().find("qk_norm_rope_cache.v00_cpu"); }

// v00 with its e4m3 pools changed after it ran: fix(b, pool, element, KV head) for each element
// a token writes.
Variant spoilt(std::function<void(Buffers&, const char*, int64_t, int64_t)> fix) {
  Variant v = cpu_rung();
  v.launch = [good = cpu_rung(), fix](const Problem& p, Buffers& b, const LaunchArgs& a) {
    good.launch(p, b, a);
    const Dims s = qk_norm_rope_cache::dims_of(p);
    for (int64_t t = 0; t < s.tokens; ++t) {
      const auto slot = static_cast<int64_t>(b["slot_mapping"].host_at(t));
      if (slot < 0) continue;
      for (const char* pool : {"k_cache", "v_cache"})
        for (int64_t h = 0; h < s.hkv; ++h)
          for (int64_t i = 0; i < s.d; ++i)
            fix(b, pool, qk_norm_rope_cache::pool_offset(slot, h, s.hkv, s.page, s.d) + i, h);
    }
  };
  return v;
}

void put(Buffers& b, const char* pool, int64_t e, double v) {
  store_from_double(b[pool].host.data(), DType::e4m3, e, v);
}

}  // namespace

TEST(QkNormRopeCacheE4m3, CpuRungPassesAtEveryE4m3AwkwardShape) {
  int n = 0;
  for (const Problem& p : family().awkward) {
    if (p.dtype != DType::e4m3) continue;
    ++n;
    const Result r = check(cpu_rung(), p);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_TRUE(r.check.passed) << p.str() << ": " << r.check.summary();
  }
  EXPECT_GE(n, 9);
}

// A test must be able to fail: each wrong rung fails where v00 passes.
TEST(QkNormRopeCacheE4m3, ChecksCatchWrongRungs) {
  const Problem p = e4m3(17, 8, 2, 128, 16, 3, 1000, 2);
  ASSERT_TRUE(check(spoilt([](Buffers&, const char*, int64_t, int64_t) {}), p).check.passed);
  // The stored value times its scale: a rung that forgot to divide by it (values, not codes).
  const Variant no_scale = spoilt([](Buffers& b, const char* pool, int64_t e, int64_t h) {
    const char* scale = pool == std::string("k_cache") ? "k_scale" : "v_scale";
    put(b, pool, e, b[pool].host_at(e) * b[scale].host_at(h));
  });
  // v quantised with k's scale of the same head.
  const Variant other_scale = spoilt([](Buffers& b, const char* pool, int64_t e, int64_t h) {
    if (pool != std::string("v_cache")) return;
    put(b, pool, e, b[pool].host_at(e) * b["v_scale"].host_at(h) / b["k_scale"].host_at(h));
  });
  // k one e4m3 step up (the code + 1, away from zero) everywhere it is not 0 or saturated.
  const Variant k_step_off = spoilt([](Buffers& b, const char* pool, int64_t e, int64_t) {
    if (pool != std::string("k_cache")) return;
    auto* bits = reinterpret_cast<uint8_t*>(b[pool].host.data());
    if ((bits[e] & 0x7f) != 0 && (bits[e] & 0x7f) < 0x7e) ++bits[e];
  });
  // The first element still holding the sentinel (a slot no token writes: the pool has spare
  // pages) set to 0.
  Variant sentinel = cpu_rung();
  sentinel.launch = [good = cpu_rung()](const Problem& q, Buffers& b, const LaunchArgs& a) {
    good.launch(q, b, a);
    auto* bits = reinterpret_cast<uint8_t*>(b["k_cache"].host.data());
    *std::find(bits, bits + b["k_cache"].spec.numel, qk_norm_rope_cache::kSentinelE4m3) = 0;
  };
  struct Case {
    const char* what;
    const Variant* v;
  };
  for (const Case& c : {Case{"no scale", &no_scale}, Case{"other scale", &other_scale},
                        Case{"k one step off", &k_step_off}, Case{"sentinel", &sentinel}}) {
    const Result r = check(*c.v, p);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_FALSE(r.check.passed) << c.what << ": " << r.check.summary();
  }
}

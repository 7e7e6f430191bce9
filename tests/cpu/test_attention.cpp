// The attention family's fp64 reference on cases computed by hand (one key, uniform scores,
// causal masks aligned to the bottom right, empty rows, grouped-query heads, large scores), its
// sampled form against the whole one, its counts and validation, and checks that catch wrong
// rungs; and how the cuDNN baseline describes the family's tensors to cuDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kernels/attention/cudnn_sdpa_layout.hpp"
#include "kernels/attention/fa2_fragment.hpp"
#include "kernels/attention/fa3_fp8.hpp"
#include "kernels/attention/fa3_schedule.hpp"
#include "kernels/attention/fa3_tile.hpp"
#include "kernels/attention/lazy_rescale.hpp"
#include "kernels/attention/family.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/device/wgmma_fragment.hpp"
#include "klab/harness/reference_attention.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;
using attention::Dims;

namespace {

Dims dims(int64_t b, int64_t nq, int64_t nkv, int64_t hq, int64_t hkv, int64_t d, bool causal) {
  return Dims::of(b, nq, nkv, hq, hkv, d, causal);
}

const Family& family() { return registry().family("attention"); }

// Host buffers of p, zeroed.
Buffers zero_buffers(const Problem& p) {
  Buffers b = make_host_buffers(family(), p);
  return b;
}

// Host buffers of p, every input element set by fn(tensor, b, n, h, i) (exactly representable
// values only).
template <class Fn>
Buffers host_buffers(const Problem& p, Fn&& fn) {
  const Dims s = attention::dims_of(p);
  Buffers b = zero_buffers(p);
  for (const char* name : {"q", "k", "v"}) {
    Tensor& t = b[name];
    const int64_t n_len = name[0] == 'q' ? s.nq : s.nkv, heads = name[0] == 'q' ? s.hq : s.hkv;
    for (int64_t e = 0; e < t.spec.numel; ++e) {
      const int64_t i = e % s.d, h = (e / s.d) % heads, n = (e / (s.d * heads)) % n_len;
      store_from_double(t.host.data(), t.spec.dtype, e,
                        fn(name[0], e / (s.d * heads * n_len), n, h, i));
    }
  }
  return b;
}

Reference whole(const Problem& p, const Buffers& b) {
  Reference r;
  family().reference(p, b, r);
  return r;
}

double o_at(const Reference& r, const Dims& s, int64_t bi, int64_t n, int64_t h, int64_t i) {
  return r.at("o").value[static_cast<size_t>(((bi * s.nq + n) * s.hq + h) * s.d + i)];
}
double lse_at(const Reference& r, const Dims& s, int64_t bi, int64_t n, int64_t h) {
  return r.at("lse").value[static_cast<size_t>((bi * s.hq + h) * s.nq + n)];
}

}  // namespace

// One key: every weight is 1, so O is that key's V row and lse its score.
TEST(Attention, OneKeyGivesItsValueRow) {
  const Dims s = dims(2, 3, 1, 2, 1, 4, false);
  const Problem p = attention::problem(s, DType::bf16);
  const Buffers b = host_buffers(p, [](char t, int64_t bi, int64_t n, int64_t h, int64_t i) {
    return t == 'q' ? 0.5 * (i + 1) - h : t == 'k' ? 0.25 * (i - 1) : 10.0 * bi + i;
  });
  const Reference r = whole(p, b);
  for (int64_t bi = 0; bi < s.b; ++bi)
    for (int64_t n = 0; n < s.nq; ++n)
      for (int64_t h = 0; h < s.hq; ++h) {
        double dot = 0;
        for (int64_t i = 0; i < s.d; ++i) dot += (0.5 * (i + 1) - h) * 0.25 * (i - 1);
        EXPECT_DOUBLE_EQ(lse_at(r, s, bi, n, h), dot / 2);  // scale 1 / sqrt(4)
        for (int64_t i = 0; i < s.d; ++i) EXPECT_DOUBLE_EQ(o_at(r, s, bi, n, h, i), 10.0 * bi + i);
      }
}

// Q = 0: every visible score is 0, so O is the mean of the visible V rows and lse = log(count).
// Causal, Nq = Nkv: row n sees keys 0..n.
TEST(Attention, UniformScoresAverageTheVisibleValues) {
  const Dims s = dims(1, 4, 4, 1, 1, 2, true);
  const Problem p = attention::problem(s, DType::f16);
  const Buffers b = host_buffers(p, [](char t, int64_t, int64_t n, int64_t, int64_t i) {
    return t == 'q' ? 0.0 : t == 'k' ? 1.0 + n : (i == 0 ? double(n) : -2.0 * n);
  });
  const Reference r = whole(p, b);
  for (int64_t n = 0; n < 4; ++n) {
    EXPECT_NEAR(o_at(r, s, 0, n, 0, 0), n / 2.0, 1e-15);  // mean of 0..n
    EXPECT_NEAR(o_at(r, s, 0, n, 0, 1), -1.0 * n, 1e-15);
    EXPECT_NEAR(lse_at(r, s, 0, n, 0), std::log(n + 1.0), 1e-15);
  }
}

// Bottom-right alignment with Nq < Nkv: row n sees keys 0..n + (Nkv - Nq); with Nq > Nkv the
// first Nq - Nkv rows see none: O = 0, lse = -inf (no NaN).
TEST(Attention, CausalMaskIsAlignedBottomRightWithEmptyRows) {
  for (auto [nq, nkv] : {std::pair<int64_t, int64_t>{2, 5}, {5, 2}, {3, 3}}) {
    const Dims s = dims(1, nq, nkv, 1, 1, 1, true);
    const Problem p = attention::problem(s, DType::bf16);
    const Buffers b = host_buffers(p, [](char t, int64_t, int64_t n, int64_t, int64_t) {
      return t == 'q' ? 0.0 : t == 'k' ? 1.0 : double(n + 1);  // v_j = j + 1
    });
    const Reference r = whole(p, b);
    for (int64_t n = 0; n < nq; ++n) {
      const int64_t visible = std::clamp<int64_t>(n + nkv - nq + 1, 0, nkv);
      EXPECT_EQ(s.visible_keys(n), visible);
      if (visible == 0) {
        EXPECT_EQ(o_at(r, s, 0, n, 0, 0), 0.0) << nq << "x" << nkv << " row " << n;
        EXPECT_EQ(lse_at(r, s, 0, n, 0), -std::numeric_limits<double>::infinity());
      } else {
        EXPECT_NEAR(o_at(r, s, 0, n, 0, 0), (visible + 1) / 2.0, 1e-15);  // mean of 1..visible
        EXPECT_NEAR(lse_at(r, s, 0, n, 0), std::log(double(visible)), 1e-15);
      }
    }
  }
}

// Grouped-query attention: query head h reads KV head h / (Hq / Hkv).
TEST(Attention, QueryHeadsShareTheirGroupsKvHead) {
  const Dims s = dims(1, 2, 3, 6, 2, 2, false);  // group size 3
  const Problem p = attention::problem(s, DType::bf16);
  const Buffers b = host_buffers(p, [](char t, int64_t, int64_t, int64_t h, int64_t i) {
    return t == 'q' ? 0.0 : t == 'k' ? 1.0 : 100.0 * h + i;  // V constant over keys per head
  });
  const Reference r = whole(p, b);
  for (int64_t h = 0; h < s.hq; ++h)
    for (int64_t i = 0; i < s.d; ++i)
      EXPECT_NEAR(o_at(r, s, 0, 1, h, i), 100.0 * (h / 3) + i, 1e-12) << "head " << h;
}

// Scores of 1024 and 1016: exp overflows even in fp64 without the maximum subtracted.
TEST(Attention, LargeScoresUseTheSafeSoftmax) {
  const Dims s = dims(1, 1, 2, 1, 1, 1, false);  // D = 1: scale 1
  const Problem p = attention::problem(s, DType::bf16);
  const Buffers b = host_buffers(p, [](char t, int64_t, int64_t n, int64_t, int64_t) {
    return t == 'q' ? 32.0 : t == 'k' ? (n == 0 ? 32.0 : 31.75) : (n == 0 ? 1.0 : -1.0);
  });
  const Reference r = whole(p, b);
  const double w1 = std::exp(-8.0) / (1 + std::exp(-8.0));
  EXPECT_NEAR(o_at(r, s, 0, 0, 0, 0), (1 - w1) - w1, 1e-14);
  EXPECT_NEAR(lse_at(r, s, 0, 0, 0), 1024 + std::log1p(std::exp(-8.0)), 1e-12);
}

// The sampled reference computes the same rows as the whole one, for both outputs' orders.
TEST(Attention, SampledRowsMatchTheWholeReference) {
  const Dims s = dims(2, 37, 29, 6, 2, 8, true);
  const Problem p = attention::problem(s, DType::bf16);
  const Buffers b = host_buffers(p, [](char t, int64_t bi, int64_t n, int64_t h, int64_t i) {
    return std::ldexp(double((bi * 7 + n * 5 + h * 3 + i * (t == 'k' ? 11 : 2)) % 17) - 8, -2);
  });
  const Reference r = whole(p, b);
  for (const char* out : {"o", "lse"}) {
    const OutputGrid g = family().output_grid(p, out);
    ASSERT_EQ(g.rows * g.cols, static_cast<int64_t>(r.at(out).value.size()));
    const std::vector<int64_t> idx = sample_indices(g, 7, 64);
    RefOutput at;
    at.index = idx;
    family().reference_at(p, b, out, idx, at);
    ASSERT_EQ(at.value.size(), idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      EXPECT_EQ(at.value[i], r.at(out).value[idx[i]]) << out << "[" << idx[i] << "]";
      EXPECT_EQ(at.magnitude[i], r.at(out).magnitude[idx[i]]) << out << "[" << idx[i] << "]";
    }
  }
}

// The reference computes rows in blocks that share each key and value row; every row's bits are
// those of the row computed alone (reference_row: the same terms in the same order), rows past
// their visible keys (the causal mask, Nq > Nkv and Nq < Nkv), empty rows and magnitudes
// included, for bf16 and f16 and amplified Q and K (amp = 8: scores far apart, weights that
// underflow to 0).
TEST(Attention, BlockedRowsMatchOneRowAtATime) {
  for (bool causal : {true, false})
    for (auto [nq, nkv] : {std::pair<int64_t, int64_t>{45, 23}, {23, 45}})  // 45 > 23: 22 empty
      for (DType dt : {DType::bf16, DType::f16})
        for (int64_t amp : {1, 8}) {
          const Dims s = Dims::of(2, nq, nkv, 6, 2, 16, causal, amp);
          const Problem p = attention::problem(s, dt);
          Buffers b = host_buffers(p, [](char, int64_t, int64_t, int64_t, int64_t) { return 0.0; });
          std::vector<float> f[3];
          int t = 0;
          for (const char* name : {"q", "k", "v"}) {
            Tensor& x = b[name];
            fill_random(x.host.data(), dt, x.spec.numel, Dist::heavy, name[0]);
            if (name[0] != 'v')  // as build_amplified: a power-of-two scaling, exact
              for (int64_t e = 0; e < x.spec.numel; ++e)
                store_from_double(x.host.data(), dt, e, static_cast<double>(amp) * x.host_at(e));
            for (int64_t e = 0; e < x.spec.numel; ++e)
              f[t].push_back(static_cast<float>(x.host_at(e)));
            ++t;
          }
          const Reference r = whole(p, b);
          for (int64_t bi = 0; bi < s.b; ++bi)
            for (int64_t n = 0; n < s.nq; ++n)
              for (int64_t h = 0; h < s.hq; ++h) {
                attention::RowReference one;
                attention::reference_row(p, f[0].data(), f[1].data(), f[2].data(), bi, n, h, one);
                const int64_t li = (bi * s.hq + h) * s.nq + n;
                EXPECT_EQ(lse_at(r, s, bi, n, h), one.lse) << bi << " " << n << " " << h;
                EXPECT_EQ(r.at("lse").magnitude[li], one.lse_magnitude);
                for (int64_t i = 0; i < s.d; ++i) {
                  const size_t oi = static_cast<size_t>(((bi * s.nq + n) * s.hq + h) * s.d + i);
                  ASSERT_EQ(r.at("o").value[oi], one.o[i])
                      << bi << " " << n << " " << h << " " << i;
                  ASSERT_EQ(r.at("o").magnitude[oi], one.magnitude[i]);
                }
              }
        }
}

// FlashAttention's FLOP count: causal halves it at Nq = Nkv; Nq = 1 sees every key; Nq > Nkv
// counts the visible triangle only.
TEST(Attention, CountsFollowFlashAttention) {
  const Family& f = family();
  const Problem full = attention::problem(dims(2, 1024, 1024, 8, 2, 128, false), DType::bf16);
  const Problem causal = attention::problem(dims(2, 1024, 1024, 8, 2, 128, true), DType::bf16);
  EXPECT_DOUBLE_EQ(f.counts(full).flops, 4.0 * 2 * 8 * 1024 * 1024 * 128);
  EXPECT_DOUBLE_EQ(f.counts(causal).flops, f.counts(full).flops / 2);
  EXPECT_DOUBLE_EQ(attention::visible_pairs(dims(1, 1, 4096, 1, 1, 64, true)), 4096 - 0.5);
  EXPECT_DOUBLE_EQ(attention::visible_pairs(dims(1, 300, 100, 1, 1, 64, true)), 100.0 * 100 / 2);
  // Bytes: Q, K, V, O once in bf16, lse once in fp32.
  EXPECT_DOUBLE_EQ(f.counts(full).bytes,
                   2.0 * (2 * 1024 * 8 * 128 * 2 + 2 * 1024 * 2 * 128 * 2) + 4.0 * 2 * 8 * 1024);
  // e4m3: Q, K, V in one byte, O in bf16, lse in fp32, the three scales; the same flops.
  const Problem fp8 = attention::problem(dims(2, 1024, 1024, 8, 2, 128, false), DType::e4m3);
  EXPECT_DOUBLE_EQ(f.counts(fp8).flops, f.counts(full).flops);
  EXPECT_DOUBLE_EQ(f.counts(fp8).bytes, 2.0 * 1024 * 8 * 128 * (1 + 2) + 2.0 * 1024 * 2 * 128 * 2 +
                                            4.0 * 2 * 8 * 1024 + 12);
  EXPECT_EQ(f.ceiling_of(fp8), "fp8_tc");
  EXPECT_EQ(f.ceiling_of(full), "bf16_tc");
}

TEST(Attention, BadProblemsAreUsageErrors) {
  const Family& f = family();
  const std::string base = "b=1,nq=8,nkv=8,d=64,";
  EXPECT_NO_THROW(make_problem(f, base + "hq=8,hkv=2,causal=1,amp=1", "bf16"));
  EXPECT_NO_THROW(make_problem(f, base + "hq=5,hkv=1,causal=0,amp=8", "f16"));
  EXPECT_THROW(make_problem(f, base + "hq=6,hkv=4,causal=1,amp=1", "bf16"), UsageError);
  EXPECT_THROW(make_problem(f, base + "hq=4,hkv=4,causal=2,amp=1", "bf16"), UsageError);
  EXPECT_THROW(make_problem(f, base + "hq=4,hkv=4,causal=0,amp=3", "bf16"), UsageError);
  // amp and causal may be left out (they default to 1 and 0); the other dimensions may not.
  EXPECT_EQ(make_problem(f, base + "hq=4,hkv=4", "bf16").dim("amp"), 1);
  EXPECT_THROW(make_problem(f, "b=1,nq=8,nkv=8,hq=4,hkv=4", "bf16"), UsageError);
  EXPECT_THROW(make_problem(f, base + "hq=4,hkv=4,causal=0,amp=1", "f32"), UsageError);
}

// The CPU rung passes where the reference is hand-checked to be delicate: empty rows, large
// scores, f16; and rungs wrong on purpose fail: one that forgets the mask, one that writes lse in
// base 2.
TEST(Attention, ChecksPassTheCpuRungAndCatchWrongOnes) {
  const Family& f = family();
  const Variant& good = *f.find("attention.v00_cpu");
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::uniform, Dist::heavy};
  Dims empty_rows = dims(2, 300, 127, 4, 1, 64, true);
  Dims large = dims(1, 257, 257, 4, 2, 128, true);
  large.amp = 8;
  for (const Problem& p :
       {attention::problem(empty_rows, DType::bf16), attention::problem(empty_rows, DType::f16),
        attention::problem(large, DType::bf16)}) {
    const Result r = run_variant(f, good, p, opt);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_TRUE(r.check.passed) << p.str() << ": " << r.check.summary();
  }

  Variant no_mask = good;
  no_mask.launch = [&good](const Problem& p, Buffers& b, const LaunchArgs& a) {
    Problem full = p;
    full.shape.set("causal", 0);
    good.launch(full, b, a);
  };
  Variant log2_lse = good;
  log2_lse.launch = [&good](const Problem& p, Buffers& b, const LaunchArgs& a) {
    good.launch(p, b, a);
    float* lse = b.ptr<float>("lse");
    for (int64_t i = 0; i < b["lse"].spec.numel; ++i) lse[i] = lse[i] / std::log(2.f);
  };
  for (auto [nq, nkv] : {std::pair<int64_t, int64_t>{127, 300}, {300, 127}, {129, 129}}) {
    const Problem p = attention::problem(dims(1, nq, nkv, 4, 2, 64, true), DType::bf16);
    const Result r = run_variant(f, no_mask, p, opt);
    EXPECT_FALSE(r.check.passed) << "no mask at " << p.str();
    EXPECT_GT(r.check.bad, 0);
  }
  const Problem p = attention::problem(dims(1, 65, 65, 2, 1, 64, false), DType::bf16);
  EXPECT_FALSE(run_variant(f, log2_lse, p, opt).check.passed);
}

// e4m3 problems: the CPU rung passes (its fp32 arithmetic on the scaled inputs), and so does a
// rung with FlashAttention 3's FP8 arithmetic (P rounded to e4m3 before P V, plain or scaled by
// 2^8 first, the row sums from the unrounded terms), at the delicate shapes; rungs wrong on
// purpose fail: one that drops the last key block of a 128-key tiling (keys 896..999 of 1000),
// one that ignores V's scale.
namespace {

// FlashAttention 3's FP8 arithmetic on the host: v00's loop with each p_j rounded to e4m3 (times
// 2^8 first with `offset`) in P V and the sum l of the unrounded terms; with `truncating`, both
// products on the raw e4m3 values as an FP8 tensor core adds them (family.cpp's model: each k32
// step's 32 products and the accumulator truncated toward zero at 2^-13 of the largest, the
// scales applied after). Wrong on purpose: drop_keys leaves out each row's last keys,
// ignore_v_scale V's scale.
struct Fp8Rung {
  bool offset = false, truncating = false;
  int64_t drop_keys = 0;
  bool ignore_v_scale = false;
};

// acc plus the products of one k32 step, each operand truncated to the multiples of 2^(E - 14)
// (E: frexp's exponent of the largest, so that the quantum is at most 2^-13 of it).
float fp8_step(float acc, const double* products, int n) {
  double largest = std::fabs(acc);
  for (int i = 0; i < n; ++i) largest = std::max(largest, std::fabs(products[i]));
  if (largest == 0) return acc;
  int e = 0;
  std::frexp(largest, &e);
  const double quantum = std::ldexp(1.0, e - 14);
  double sum = std::trunc(acc / quantum) * quantum;
  for (int i = 0; i < n; ++i) sum += std::trunc(products[i] / quantum) * quantum;
  return static_cast<float>(sum);
}

Variant fp8_arithmetic(Fp8Rung how) {
  Variant v = *family().find("attention.v00_cpu");
  v.launch = [=](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = attention::dims_of(p);
    // The rung's buffers (host memory for a CPU rung): element i of tensor `name` as a float.
    auto at = [&](const char* name, int64_t i) {
      return static_cast<float>(load_as_double(b[name].data, b[name].spec.dtype, i));
    };
    auto raw = [&](const char* name) {
      std::vector<float> x(static_cast<size_t>(b[name].spec.numel));
      for (size_t i = 0; i < x.size(); ++i) x[i] = at(name, int64_t(i));
      return x;
    };
    const std::vector<float> q = raw("q"), k = raw("k"), vv = raw("v");
    const float qk_scale = at("q_scale", 0) * at("k_scale", 0);
    const float v_scale = how.ignore_v_scale ? 1.f : at("v_scale", 0);
    const float mul = how.offset ? 256.f : 1.f;
    // A dot product of n terms term(i), in fp32 or as the FP8 tensor cores add it.
    auto dot = [&](int64_t n, auto&& term) {
      float acc = 0.f;
      double step[32];
      for (int64_t i0 = 0; i0 < n; i0 += 32) {
        const int m = int(std::min<int64_t>(32, n - i0));
        for (int i = 0; i < m; ++i) step[i] = term(i0 + i);
        if (how.truncating) {
          acc = fp8_step(acc, step, m);
        } else {
          for (int i = 0; i < m; ++i) acc += static_cast<float>(step[i]);
        }
      }
      return acc;
    };
    for (int64_t r = 0; r < s.rows(); ++r) {
      const int64_t bi = r / (s.nq * s.hq), n = (r / s.hq) % s.nq, h = r % s.hq;
      const int64_t hk = h / s.group();
      const int64_t nvis = std::max<int64_t>(0, s.visible_keys(n) - how.drop_keys);
      auto row = [&](const std::vector<float>& x, int64_t j) {
        return x.data() + ((bi * s.nkv + j) * s.hkv + hk) * s.d;
      };
      std::vector<float> pj(static_cast<size_t>(std::max<int64_t>(nvis, 1)));
      float mx = -INFINITY;
      for (int64_t j = 0; j < nvis; ++j) {
        const float* kr = row(k, j);
        const float d = dot(s.d, [&](int64_t i) { return double(q[r * s.d + i]) * kr[i]; });
        mx = std::max(mx, pj[j] = static_cast<float>(s.scale()) * qk_scale * d);
      }
      float l = 0.f;
      std::vector<float> rounded(pj.size());
      for (int64_t j = 0; j < nvis; ++j) {
        const float t = std::exp(pj[j] - mx) * mul;
        l += t;
        rounded[j] = e4m3_bits_to_float(float_to_e4m3_bits(t));
      }
      for (int64_t i = 0; i < s.d; ++i) {
        const float o =
            dot(nvis, [&](int64_t j) { return double(rounded[j]) * row(vv, j)[i]; }) * v_scale;
        store_from_double(b["o"].data, DType::bf16, r * s.d + i, nvis > 0 ? o / l : 0.0);
      }
      b.ptr<float>("lse")[(bi * s.hq + h) * s.nq + n] =
          nvis > 0 ? mx + std::log(l / mul) : -INFINITY;
    }
  };
  return v;
}

}  // namespace

TEST(Attention, E4m3ChecksPassFp8ArithmeticAndCatchWrongRungs) {
  const Family& f = family();
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::uniform, Dist::heavy};
  opt.seed = 1;  // reproducible scales: the ignored-V-scale case needs one far from 1
  Dims large = dims(1, 257, 257, 2, 1, 128, true);
  large.amp = 8;
  const std::vector<Problem> delicate = {
      attention::problem(dims(1, 300, 127, 4, 1, 128, true), DType::e4m3),  // empty rows
      attention::problem(dims(1, 1000, 1000, 2, 1, 64, false), DType::e4m3),
      attention::problem(large, DType::e4m3)};
  for (const Problem& p : delicate) {
    for (const Variant& v :
         {*f.find("attention.v00_cpu"), fp8_arithmetic({}), fp8_arithmetic({.offset = true}),
          fp8_arithmetic({.offset = true, .truncating = true})}) {
      const Result r = run_variant(f, v, p, opt);
      ASSERT_EQ(r.status, "ok") << r.reason;
      EXPECT_TRUE(r.check.passed) << p.str() << ": " << r.check.summary();
    }
  }
  const Problem p = attention::problem(dims(1, 1000, 1000, 2, 1, 64, false), DType::e4m3);
  EXPECT_FALSE(run_variant(f, fp8_arithmetic({.offset = true, .drop_keys = 1000 - 896}), p, opt)
                   .check.passed);
  EXPECT_FALSE(run_variant(f, fp8_arithmetic({.offset = true, .ignore_v_scale = true}), p, opt)
                   .check.passed);
}

// The host cost of a sampled check at a headline shape (causal, N = 8192, H = 32, D = 128): the
// inputs drawn and the sampled fp64 reference of both outputs, timed and printed, computed in
// blocks of rows (the family's) and one row at a time from fp32 copies of the inputs (as it was
// before the blocks), with the same bits. The sample's size and each row's work do not depend on
// the batch, so b = 1 costs the reference of b = 4 with a quarter of the inputs. Disabled (a
// minute on two cores): run with --gtest_also_run_disabled_tests --gtest_filter='*HostCost*'.
TEST(Attention, DISABLED_HeadlineHostCost) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  const Dims s = dims(1, 8192, 8192, 32, 32, 128, true);
  const Problem p = attention::problem(s, DType::bf16);
  ASSERT_TRUE(family().sampled(p));
  auto t0 = clock::now();
  Buffers b = zero_buffers(p);
  uint64_t k = 0;
  for (Tensor& t : b.tensors)
    if (!t.is_output()) fill_random(t.host.data(), t.spec.dtype, t.spec.numel, Dist::normal, ++k);
  std::printf("inputs (3 x %lld elements): %.2f s\n", static_cast<long long>(b["q"].spec.numel),
              since(t0));
  for (const char* out : {"o", "lse"}) {
    const std::vector<int64_t> idx = sample_indices(family().output_grid(p, out), 7);
    t0 = clock::now();
    RefOutput at;
    at.index = idx;
    family().reference_at(p, b, out, idx, at);
    const double blocked = since(t0);
    // One row at a time: the rows of the sample, from fp32 copies of the inputs.
    t0 = clock::now();
    std::vector<float> f[3];
    int t = 0;
    for (const char* name : {"q", "k", "v"}) {
      const Tensor& x = b[name];
      f[t].resize(static_cast<size_t>(x.spec.numel));
#pragma omp parallel for schedule(static)
      for (int64_t e = 0; e < x.spec.numel; ++e) f[t][e] = static_cast<float>(x.host_at(e));
      ++t;
    }
    const bool lse = out[0] == 'l';
    const std::vector<int64_t> rows = sampled_rows(idx, [&](int64_t e) {
      return lse ? (e % s.nq) * s.hq + e / s.nq : e / s.d;  // b = 1
    });
    std::vector<attention::RowReference> one(rows.size());
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i)
      attention::reference_row(p, f[0].data(), f[1].data(), f[2].data(), 0, rows[i] / s.hq,
                               rows[i] % s.hq, one[i]);
    const double alone = since(t0);
    std::printf(
        "reference of %s (%zu sampled elements, %zu rows): %.2f s in blocks, %.2f s alone\n", out,
        idx.size(), rows.size(), blocked, alone);
    for (size_t i = 0; i < idx.size(); i += 97) {
      const attention::RowReference& r =
          one[row_position(rows, lse ? (idx[i] % s.nq) * s.hq + idx[i] / s.nq : idx[i] / s.d)];
      ASSERT_EQ(at.value[i], lse ? r.lse : r.o[idx[i] % s.d]) << out << "[" << idx[i] << "]";
    }
  }
}

// ---- attention v03's shared-memory tiles and mma.sync fragments (kernels/attention/
// fa2_fragment.hpp), modelled lane by lane: ldmatrix(.trans) as the PTX manual defines it, on a
// swizzled tile whose every element holds its own (row, column) code ----

namespace {

namespace fa2 = klab::attention::fa2;

// An element's code in a (rows, kD) tile: row * kD + column (a bijection on the tile).
template <int kD>
std::vector<int> coded_tile(int rows) {
  std::vector<int> s(static_cast<size_t>(rows * kD), -1);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < kD; ++c) {
      const int at = fa2::tile_offset<kD>(r, c / 8) + c % 8;
      EXPECT_EQ(s[at], -1) << "two elements at one offset";
      s[at] = r * kD + c;
    }
  return s;
}

// One b32 register of two 16-bit elements, as codes (lo = the low half).
struct Pair {
  int lo = -1, hi = -1;
};

// ldmatrix.x4 (.trans): lanes 8i .. 8i+7 give the row addresses of matrix i; register i of lane
// l holds row l/4, elements 2(l%4), +1 (trans: column l/4, rows 2(l%4), +1).
void ldmatrix_x4_model(const std::vector<int>& s, const int (&addr)[32], bool trans,
                       Pair (&out)[32][4]) {
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < 32; ++l) {
      const int t = l % 4, g = l / 4;
      if (!trans)
        out[l][i] = {s[addr[8 * i + g] + 2 * t], s[addr[8 * i + g] + 2 * t + 1]};
      else
        out[l][i] = {s[addr[8 * i + 2 * t] + g], s[addr[8 * i + 2 * t + 1] + g]};
    }
}

// kB: K's addressing (k_ldmatrix_offset, B's register order), else Q's and V's.
template <int kD, bool kB = false>
void load(const std::vector<int>& s, int row0, int chunk0, bool trans, Pair (&out)[32][4]) {
  int addr[32];
  for (int l = 0; l < 32; ++l) {
    addr[l] = kB ? fa2::k_ldmatrix_offset<kD>(row0, chunk0, l)
                 : fa2::ldmatrix_offset<kD>(row0, chunk0, l);
    const fa2::LaneOffsets lo = kB ? fa2::k_lane_offsets<kD>(l) : fa2::lane_offsets<kD>(l);
    EXPECT_EQ(addr[l], fa2::ldmatrix_offset<kD>(lo, row0, chunk0))
        << "the hoisted form, lane " << l << " row0 " << row0 << " chunk0 " << chunk0;
  }
  ldmatrix_x4_model(s, addr, trans, out);
}

template <int kD>
void check_fragments() {
  constexpr int kRows = 64;
  const std::vector<int> s = coded_tile<kD>(kRows);
  auto code = [](int r, int c) { return r * kD + c; };
  for (int row0 = 0; row0 < kRows; row0 += 16)
    for (int chunk0 = 0; chunk0 < kD / 8; chunk0 += 2) {
      const int col0 = 8 * chunk0;
      Pair r[32][4];
      // Q, the A operand (rows = queries, columns = D): a0 (g, 2t) a1 (g+8, 2t) a2 (g, 2t+8)
      // a3 (g+8, 2t+8), each with the next column in the high half.
      load<kD>(s, row0, chunk0, false, r);
      for (int l = 0; l < 32; ++l) {
        const int g = l / 4, t = l % 4;
        for (int i = 0; i < 4; ++i) {
          const int rr = row0 + g + 8 * (i % 2), cc = col0 + 2 * t + 8 * (i / 2);
          ASSERT_EQ(r[l][i].lo, code(rr, cc)) << "Q a" << i << " lane " << l;
          ASSERT_EQ(r[l][i].hi, code(rr, cc + 1)) << "Q a" << i << " lane " << l;
        }
      }
      // K, the B operand of S = Q K^T, loaded in B's register order.
      load<kD, true>(s, row0, chunk0, false, r);
      for (int l = 0; l < 32; ++l) {
        const int g = l / 4, t = l % 4;
        // K, the B operand of S = Q K^T (rows = keys = n, columns = D = k): key tile 0 / 1
        // takes keys row0 + g / row0 + 8 + g; b0 = (k 2t, 2t+1), b1 = (k 2t+8, 2t+9).
        Pair b[2][2];
        fa2::k_fragments(r[l], b[0], b[1]);
        for (int nt = 0; nt < 2; ++nt)
          for (int j = 0; j < 2; ++j) {
            const int key = row0 + 8 * nt + g, d = col0 + 2 * t + 8 * j;
            ASSERT_EQ(b[nt][j].lo, code(key, d)) << "K tile " << nt << " b" << j << " lane " << l;
            ASSERT_EQ(b[nt][j].hi, code(key, d + 1)) << "K tile " << nt << " b" << j;
          }
      }
      // V, the B operand of O = P V (rows = keys = k, columns = D = n), through .trans: D tile
      // 0 / 1 takes columns col0 + g / col0 + 8 + g; b0 = (k 2t, 2t+1), b1 = (k 2t+8, 2t+9).
      load<kD>(s, row0, chunk0, true, r);
      for (int l = 0; l < 32; ++l) {
        const int g = l / 4, t = l % 4;
        Pair b[2][2];
        fa2::v_fragments(r[l], b[0], b[1]);
        for (int nt = 0; nt < 2; ++nt)
          for (int j = 0; j < 2; ++j) {
            const int d = col0 + 8 * nt + g, key = row0 + 2 * t + 8 * j;
            ASSERT_EQ(b[nt][j].lo, code(key, d)) << "V tile " << nt << " b" << j << " lane " << l;
            ASSERT_EQ(b[nt][j].hi, code(key + 1, d)) << "V tile " << nt << " b" << j;
          }
      }
    }
}

}  // namespace

TEST(AttentionFa2Fragments, LdmatrixOfTheSwizzledTilesGivesTheMmaOperands) {
  check_fragments<64>();
  check_fragments<128>();
  check_fragments<256>();
}

// S's accumulators (c0, c1 (g, 8 nt + 2t, +1), c2, c3 (g + 8, ..)) of key tiles 2 ks and 2 ks + 1
// become P's A fragment of the 16-key step ks: a0 (g, 2t) a1 (g+8, 2t) a2 (g, 2t+8) a3 (g+8,
// 2t+8) in the step's keys, the lower key in the low half.
TEST(AttentionFa2Fragments, ScoreAccumulatorsBecomeTheNextProductsAOperand) {
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    float c[2][4];  // key tile lo / hi, as codes row * 16 + key within the step
    for (int nt = 0; nt < 2; ++nt)
      for (int e = 0; e < 4; ++e) c[nt][e] = float((g + 8 * (e / 2)) * 16 + 8 * nt + 2 * t + e % 2);
    Pair a[4];
    fa2::p_fragment(c[0], c[1], a, [](float x, float y) { return Pair{int(x), int(y)}; });
    for (int i = 0; i < 4; ++i) {
      const int row = g + 8 * (i % 2), key = 2 * t + 8 * (i / 2);
      EXPECT_EQ(a[i].lo, row * 16 + key) << "a" << i << " lane " << l;
      EXPECT_EQ(a[i].hi, row * 16 + key + 1) << "a" << i << " lane " << l;
    }
  }
}

// Shared-memory banks: the 8 row addresses of each ldmatrix phase, the 8 chunks of a row that 8
// consecutive threads copy, and the rows of O's staging stores fall in 8 distinct 16-byte bank
// groups (a 128-byte line is the 32 banks).
TEST(AttentionFa2Fragments, TilesAreConflictFree) {
  auto group = [](int elem_offset) { return (elem_offset * 2 / 16) % 8; };
  auto check = [&]<int kD>() {
    for (int row0 = 0; row0 < 64; row0 += 16)
      for (int chunk0 = 0; chunk0 < kD / 8; chunk0 += 2)
        for (int phase = 0; phase < 4; ++phase) {
          std::set<int> groups;
          for (int l = 8 * phase; l < 8 * phase + 8; ++l)
            groups.insert(group(fa2::ldmatrix_offset<kD>(row0, chunk0, l)));
          EXPECT_EQ(groups.size(), 8u) << "ldmatrix phase " << phase << " D " << kD;
        }
    for (int r = 0; r < 16; ++r)
      for (int c0 = 0; c0 < kD / 8; c0 += 8) {
        std::set<int> groups;
        for (int c = c0; c < c0 + 8; ++c) groups.insert(group(fa2::tile_offset<kD>(r, c)));
        EXPECT_EQ(groups.size(), 8u) << "copy of row " << r << " D " << kD;
      }
    // O's staging: lane (g, t) stores 4 bytes at (row g, D tile nt, element 2t); 32 lanes, 32
    // distinct banks.
    for (int nt = 0; nt < kD / 8; ++nt) {
      std::set<int> banks;
      for (int l = 0; l < 32; ++l)
        banks.insert((fa2::tile_offset<kD>(l / 4, nt) + 2 * (l % 4)) * 2 / 4 % 32);
      EXPECT_EQ(banks.size(), 32u) << "O staging, D tile " << nt << " D " << kD;
    }
  };
  check.template operator()<64>();
  check.template operator()<128>();
  check.template operator()<256>();
}

// ---- v04 (FA3 on wgmma): tiles, descriptors, the P operand, key blocks, tensor maps ----

namespace {

// Where wgmma reads element (mn, k) of the operand `desc` describes (tiles based at address 0),
// by the PTX canonical layouts (wgmma_desc.hpp's model, held to the TMA's boxes in
// test_device_encodings.cpp).
uint32_t fa3_reads(uint64_t desc, bool mn_major, int mn, int k) {
  const device::WgmmaDescFields f = device::wgmma_desc_decode(desc);
  EXPECT_EQ(f.base_offset, 0u);
  EXPECT_EQ(f.swizzle, device::WgmmaSwizzle::b128);
  return device::wgmma_swizzled_offset(f.swizzle, mn_major, f.start, f.lbo, f.sbo, uint32_t(mn),
                                       uint32_t(k));
}

template <int kD, int kStages = 2, int kBlockM = 128,
          int kBlockN_ = attention::fa3::kDefaultBlockN<kD>, bool kPInSmem = false>
void check_fa3_tiles() {
  using Tiles = attention::fa3::Tiles<kD, kStages, kBlockM, kBlockN_, kPInSmem>;
  using Q = typename Tiles::Q;
  using KV = typename Tiles::KV;
  constexpr int kBlockN = Tiles::kBlockN;
  // S = Q K^T. A = Q, K-major: warpgroup wg's (row, k) of k-step kk is Q's (64 wg + row, 16 kk + k).
  for (int wg = 0; wg < kBlockM / 64; ++wg)
    for (int kk = 0; kk < kD / 16; ++kk)
      for (int row = 0; row < 64; ++row)
        for (int k = 0; k < 16; ++k)
          ASSERT_EQ(fa3_reads(Q::desc_k_major(0, 64 * wg, kk), false, row, k),
                    Q::offset(64 * wg + row, 16 * kk + k))
              << "Q D " << kD << " wg " << wg << " kk " << kk << " row " << row << " k " << k;
  // B = K^T, K-major: (n = key, k) of k-step kk is K's (key, 16 kk + k), all kBlockN keys.
  for (int kk = 0; kk < kD / 16; ++kk)
    for (int key = 0; key < kBlockN; ++key)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(fa3_reads(KV::desc_k_major(0, 0, kk), false, key, k),
                  KV::offset(key, 16 * kk + k))
            << "K D " << kD << " kk " << kk << " key " << key << " k " << k;
  // O = P V. B = V, MN-major (transpose bit 1): (n = d, k) of key step ks is V's (16 ks + k, d),
  // every d of the tile through one descriptor (LBO: the next panel of 64).
  for (int ks = 0; ks < kBlockN / 16; ++ks)
    for (int d = 0; d < kD; ++d)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(fa3_reads(KV::desc_mn_major(0, ks), true, d, k), KV::offset(16 * ks + k, d))
            << "V D " << kD << " ks " << ks << " d " << d << " k " << k;
  // A descriptor at a tile's shared-memory address reads the same offsets from there.
  const uint32_t v1 = Tiles::v_tile(1);
  EXPECT_EQ(fa3_reads(KV::desc_mn_major(v1, 1), true, 70 % kD, 9), v1 + KV::offset(25, 70 % kD));
  // Every element of a tile has its own bytes; the tiles are 1024-byte aligned (TMA boxes with
  // the 128-byte swizzle) and disjoint, and fit the block's shared memory with its barriers.
  std::set<uint32_t> seen;
  for (int r = 0; r < Tiles::kBlockM; ++r)
    for (int c = 0; c < kD; ++c) seen.insert(Q::offset(r, c));
  EXPECT_EQ(seen.size(), size_t(Tiles::kBlockM * kD));
  EXPECT_EQ(*seen.rbegin(), Q::kBytes - 2);
  seen.clear();
  for (int r = 0; r < kBlockN; ++r)
    for (int c = 0; c < kD; ++c) seen.insert(KV::offset(r, c));
  EXPECT_EQ(seen.size(), size_t(kBlockN * kD));
  EXPECT_EQ(*seen.rbegin(), KV::kBytes - 2);
  for (int st = 0; st < Tiles::kStages; ++st) {
    EXPECT_EQ(Tiles::k_tile(st) % 1024, 0u);
    EXPECT_EQ(Tiles::v_tile(st) % 1024, 0u);
    EXPECT_GE(Tiles::k_tile(st), st == 0 ? Q::kBytes : Tiles::v_tile(st - 1) + KV::kBytes);
    EXPECT_EQ(Tiles::v_tile(st), Tiles::k_tile(st) + KV::kBytes);
  }
  EXPECT_EQ(Tiles::kBytes,
            Tiles::v_tile(Tiles::kStages - 1) + KV::kBytes + Tiles::kPTiles * Tiles::P::kBytes);
  // The barriers, the tile word, the pin words, then v18's Q halves (two barriers and a tile
  // word each).
  EXPECT_EQ(
      attention::fa3::kSmemBytes<Tiles>,
      1024 + int(Tiles::kBytes) + (2 + 4 * Tiles::kStages) * 8 + 16 + 16 * 4 + 4 * 8 + 2 * 16);
  EXPECT_LE(attention::fa3::kSmemBytes<Tiles>, attention::fa3::kMaxSmemBytes);
}

}  // namespace

TEST(AttentionFa3Tiles, WgmmaReadsEachOperandWhereTheTmaWroteIt) {
  check_fa3_tiles<64>();
  check_fa3_tiles<128>();
  check_fa3_tiles<256>();
  // v05's three-stage rings (D <= 128).
  check_fa3_tiles<64, 3>();
  check_fa3_tiles<128, 3>();
  // v09's 192-row tiles (three consumer warpgroups, D = 64).
  check_fa3_tiles<64, 3, 192>();
  // v11's wide key blocks at D = 64, with the consumers' P tiles after the stages.
  check_fa3_tiles<64, 2, 192, 192, true>();
  check_fa3_tiles<64, attention::fa3::kWideStages, 192, attention::fa3::kWideKeys, true>();
  // v23's two consumers on 256-key blocks with their P tiles.
  check_fa3_tiles<64, attention::fa3::kTwoConsumerStages, 128, attention::fa3::kTwoConsumerKeys,
                  true>();
}

// v11's P V reads P from shared memory: each consumer thread stores its S accumulator pairs
// (wgmma_fragment.hpp: register i of thread t at (row, key)) where the K-major A descriptor of
// key step ks reads (row, 16 ks + k), every element of the warpgroup's (64, kN) tile once; a
// warp's store of one (nb, h) touches 32 distinct banks (no conflict); the P tiles sit after the
// stages, one per consumer warpgroup, in whole panels, 1024-byte aligned and disjoint.
template <int kN, int kStages, int kBlockM = 192>
void check_p_tiles() {
  namespace fa3 = attention::fa3;
  using Tiles = fa3::Tiles<64, kStages, kBlockM, kN, true>;
  constexpr int kWgs = kBlockM / 64;
  using P = typename Tiles::P;
  std::set<uint32_t> seen;
  for (int t = 0; t < 128; ++t) {
    const fa3::PStore at = fa3::p_store_of(t);
    for (int nb = 0; nb < kN / 8; ++nb)
      for (int h = 0; h < 2; ++h) {
        const device::WgmmaAccCoord c = device::wgmma_acc_coord(t, 4 * nb + 2 * h);
        const device::WgmmaAccCoord c1 = device::wgmma_acc_coord(t, 4 * nb + 2 * h + 1);
        ASSERT_EQ(c1.row, c.row);
        ASSERT_EQ(c1.col, c.col + 1);
        const uint32_t off = fa3::p_pair_offset(at, nb, h);
        ASSERT_EQ(off, P::offset(c.row, c.col)) << "N " << kN << " t " << t << " nb " << nb;
        ASSERT_EQ(off + 2, P::offset(c.row, c.col + 1));
        seen.insert(off);
      }
  }
  EXPECT_EQ(seen.size(), size_t(64 * kN / 2));
  for (int nb = 0; nb < kN / 8; ++nb)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 4; ++w) {
        std::set<uint32_t> banks;
        for (int l = 0; l < 32; ++l)
          banks.insert(fa3::p_pair_offset(fa3::p_store_of(32 * w + l), nb, h) / 4 % 32);
        ASSERT_EQ(banks.size(), 32u) << "N " << kN << " nb " << nb << " h " << h << " warp " << w;
      }
  for (int ks = 0; ks < kN / 16; ++ks)
    for (int row = 0; row < 64; ++row)
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(fa3_reads(P::desc_k_major(0, 0, ks), false, row, k), P::offset(row, 16 * ks + k))
            << "N " << kN << " ks " << ks << " row " << row << " k " << k;
  EXPECT_EQ(P::kPanels, (kN + 63) / 64);
  EXPECT_EQ(Tiles::kPTiles, kWgs);
  EXPECT_EQ(Tiles::p_tile(0), Tiles::v_tile(Tiles::kStages - 1) + Tiles::KV::kBytes);
  for (int wg = 0; wg < kWgs; ++wg) EXPECT_EQ(Tiles::p_tile(wg) % 1024, 0u);
  EXPECT_EQ(Tiles::p_tile(1), Tiles::p_tile(0) + P::kBytes);
  EXPECT_EQ(Tiles::kBytes, Tiles::p_tile(kWgs - 1) + P::kBytes);
  EXPECT_LE(fa3::kSmemBytes<Tiles>, fa3::kMaxSmemBytes);
}

TEST(AttentionFa3Tiles, StoredProbabilitiesAreWhereTheSharedAOperandReadsThem) {
  namespace fa3 = attention::fa3;
  check_p_tiles<192, 2>();
  check_p_tiles<176, 2>();
  check_p_tiles<160, 3>();
  check_p_tiles<fa3::kWideKeys, fa3::kWideStages>();
  // v23's: two consumers (128-row tiles) on 256 keys, two stages.
  check_p_tiles<fa3::kTwoConsumerKeys, fa3::kTwoConsumerStages, 128>();
  // Three stages of 192 or 176 keys would not fit beside the P tiles.
  EXPECT_GT((fa3::kSmemBytes<fa3::Tiles<64, 3, 192, 192, true>>), fa3::kMaxSmemBytes);
  EXPECT_GT((fa3::kSmemBytes<fa3::Tiles<64, 3, 192, 176, true>>), fa3::kMaxSmemBytes);
}

// v16's epilogue: the O pairs of each consumer warpgroup's 128 threads land in its own 64 rows of
// Q's tile, element (row, col) of O exactly where the TMA box of that panel holds it (the layout
// Q arrived in), every element once, and the 32 lanes of a warp's 4-byte store (one register
// pair index) in 32 different banks.
template <int kBlockM, int kD>
void check_o_staging() {
  namespace fa3 = attention::fa3;
  using Q = fa3::PanelTile<kBlockM, kD>;
  std::vector<int> hits(Q::kBytes / 4, 0);
  for (int wg = 0; wg < kBlockM / 64; ++wg)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < kD / 2; i += 2) {
        const uint32_t off = fa3::o_stage_offset<kBlockM, kD>(wg, t, i);
        const auto c = device::wgmma_acc_coord(t, i);
        ASSERT_EQ(off % 4, 0u);
        EXPECT_EQ(off, Q::offset(64 * wg + c.row, c.col));
        EXPECT_EQ(off + 2, Q::offset(64 * wg + c.row, c.col + 1));
        // Inside the warpgroup's own rows: the 64-row box of panel c.col / 64 at row 64 wg.
        const uint32_t box = uint32_t(c.col / 64) * Q::kPanelBytes + uint32_t(64 * wg) * 128;
        EXPECT_GE(off, box);
        EXPECT_LT(off, box + 64 * 128);
        ++hits[off / 4];
      }
  for (int h : hits) EXPECT_EQ(h, 1);
  for (int wg = 0; wg < kBlockM / 64; ++wg)
    for (int w = 0; w < 4; ++w)
      for (int i = 0; i < kD / 2; i += 2) {
        std::set<uint32_t> banks;
        for (int l = 0; l < 32; ++l) {
          const uint32_t off = fa3::o_stage_offset<kBlockM, kD>(wg, 32 * w + l, i);
          banks.insert(off / 4 % 32);
        }
        EXPECT_EQ(banks.size(), 32u) << "wg " << wg << " warp " << w << " pair " << i;
      }
}

TEST(AttentionFa3Tiles, StagedOutputIsWhereTheTmaStoreReadsItConflictFree) {
  check_o_staging<128, 64>();
  check_o_staging<128, 128>();
  check_o_staging<128, 256>();
}

// v12 (FP8): S's accumulators packed into the e4m3 A fragment of k32 in place (p8_source) sit
// where the fragment holds row 16 w + g + 8 (j % 2), k 4 t + 16 (j / 2) + b (PTX ISA, wgmma
// .m64nNk32's A), and the key they are is p8_key of that k; Vt's column of key n is the place
// p8_place gives, its inverse; every (key, d) of a block has its own byte of Vt.
TEST(AttentionFa3Tiles, Fp8ProbabilitiesPackInPlaceAgainstThePermutedVt) {
  namespace fa3 = attention::fa3;
  // v12's tensor maps: boxes of one 128-byte swizzle span, 128 e4m3 values.
  const fa3::TokenMap m = fa3::token_map(2, 300, 4, fa3::kFp8D, 128, /*elem_bytes*/ 1);
  EXPECT_EQ(m.box[0], fa3::kRowBytes);
  EXPECT_EQ(m.strides[0], uint64_t(fa3::kFp8D));
  for (int c = 0; c < 32; ++c) {
    EXPECT_EQ(fa3::p8_place(fa3::p8_key(c)), c);
    EXPECT_EQ(fa3::p8_key(fa3::p8_place(c)), c);
  }
  for (int t = 0; t < 128; ++t) {
    const int w = t / 32, g = t % 32 / 4, t4 = t % 4;
    std::set<int> used;
    for (int ks = 0; ks < fa3::kFp8BlockN / 32; ++ks)
      for (int j = 0; j < 4; ++j)
        for (int b = 0; b < 4; ++b) {
          const int i = fa3::p8_source(ks, j, b);
          used.insert(i);
          const device::WgmmaAccCoord at = device::wgmma_acc_coord(t, i);
          const int k = 4 * t4 + 16 * (j / 2) + b;  // the fragment's k of this byte
          ASSERT_EQ(at.row, 16 * w + g + 8 * (j % 2)) << "t " << t << " ks " << ks << " j " << j;
          ASSERT_EQ(at.col, 32 * ks + fa3::p8_key(k)) << "t " << t << " ks " << ks << " j " << j;
        }
    EXPECT_EQ(used.size(), size_t(fa3::kFp8BlockN / 2));  // every accumulator once
  }
  const fa3::VtLayout lay = fa3::vt_layout(300);
  EXPECT_EQ(lay.blocks, 3);
  std::set<int64_t> seen;
  for (int64_t n = 0; n < 3 * 128; ++n)
    for (int64_t d = 0; d < 128; ++d) {
      const int64_t off = lay.offset(1, n, 2, d, 4);
      EXPECT_GE(off, 0);
      EXPECT_LT(off, lay.bytes(2, 4));
      seen.insert(off);
    }
  EXPECT_EQ(seen.size(), size_t(3 * 128 * 128));
  // Row jb * 128 + d of head h holds block jb's keys: the TMA box of K's coordinates
  // (0, h, jb * 128, b) over a (B, Nb * 128, Hkv, 128) array reads exactly them.
  EXPECT_EQ(lay.offset(1, 130, 2, 5, 4), ((1 * 384 + 128 + 5) * 4 + 2) * 128 + fa3::p8_place(2));
}

// S's accumulators (wgmma_fragment.hpp: register i of thread t at (row, key)) become P's A
// registers of key step ks: warp w's lane (g, t4) holds a0 (16w + g, 2 t4), a1 (+8 rows), a2 (+8
// keys), a3 (+8, +8), two keys each, the lower key in the low half (wgmma_rs's A layout).
TEST(AttentionFa3Tiles, ScoreAccumulatorsBecomeTheRegisterAOperand) {
  auto check = [&]<int kN>() {
    for (int t = 0; t < 128; ++t) {
      float s[kN / 2];
      for (int i = 0; i < kN / 2; ++i) {
        const device::WgmmaAccCoord c = device::wgmma_acc_coord(t, i);
        s[i] = float(c.row * kN + c.col);
      }
      const int w = t / 32, g = t % 32 / 4, t4 = t % 4;
      for (int ks = 0; ks < kN / 16; ++ks) {
        Pair a[4];
        attention::fa3::p_operand<kN>(s, ks, a, [](float x, float y) {
          return Pair{int(x), int(y)};
        });
        for (int j = 0; j < 4; ++j) {
          const int row = 16 * w + g + 8 * (j % 2), key = 16 * ks + 2 * t4 + 8 * (j / 2);
          ASSERT_EQ(a[j].lo, row * kN + key)
              << "N " << kN << " t " << t << " ks " << ks << " a" << j;
          ASSERT_EQ(a[j].hi, row * kN + key + 1) << "N " << kN << " t " << t << " ks " << ks;
        }
      }
    }
  };
  check.template operator()<64>();
  check.template operator()<128>();
}

// The causal skipping: a key block is visited exactly when some valid row of the query tile sees
// one of its keys, and left unmasked only when every valid row sees all of its keys (which also
// keeps the ragged end of the keys masked). Brute force over the family's own visible_keys.
TEST(AttentionFa3Tiles, KeyBlocksVisitEveryVisibleKeyAndMaskOnlyCrossingBlocks) {
  for (auto [bm, bn] : {std::pair{128, 128}, std::pair{128, 64}, std::pair{64, 32}})
    for (int64_t nq : {1, 17, 127, 128, 129, 300, 1000})
      for (int64_t nkv : {1, 64, 127, 128, 129, 300, 1000})
        for (bool causal : {false, true}) {
          const Dims s = dims(1, nq, nkv, 1, 1, 64, causal);
          for (int64_t n0 = 0; n0 < nq; n0 += bm) {
            const auto kb = attention::fa3::key_blocks(nq, nkv, causal, n0, bm, bn);
            ASSERT_LE(kb.unmasked, kb.count);
            const int64_t n_end = std::min<int64_t>(n0 + bm, nq);
            for (int64_t jb = 0; jb * bn < nkv; ++jb) {
              bool any = false, all = true;
              for (int64_t n = n0; n < n_end; ++n)
                for (int64_t j = jb * bn; j < (jb + 1) * bn; ++j) {
                  const bool visible = j < nkv && j < s.visible_keys(n);
                  any |= visible;
                  all &= visible;
                }
              ASSERT_EQ(jb < kb.count, any) << nq << " " << nkv << " " << causal << " n0 " << n0
                                            << " block " << jb << " (" << bm << ", " << bn << ")";
              ASSERT_EQ(jb < kb.unmasked, all)
                  << nq << " " << nkv << " " << causal << " n0 " << n0 << " block " << jb;
            }
          }
        }
  // Nq = Nkv = 8k causal, 128 x 128 tiles: 64 * 65 / 2 blocks instead of 64 * 64, 64 of them
  // masked (one diagonal block a tile).
  int64_t visited = 0, masked = 0;
  for (int64_t n0 = 0; n0 < 8192; n0 += 128) {
    const auto kb = attention::fa3::key_blocks(8192, 8192, true, n0, 128, 128);
    visited += kb.count;
    masked += kb.count - kb.unmasked;
  }
  EXPECT_EQ(visited, 64 * 65 / 2);
  EXPECT_EQ(masked, 64);
}

// v19's trim: a warpgroup's 64 rows skip the second half of the first block they visit exactly
// when none of them sees a key there (the check against every row and key), and at Nq = Nkv with
// 128 x 128 tiles that is the first warpgroup at every tile's diagonal block, never the second.
TEST(AttentionFa3Tiles, TrimmedHalfHoldsNoVisibleKey) {
  constexpr int bm = 128, bn = 128;
  for (int64_t nq : {1, 17, 64, 127, 128, 129, 300, 1000})
    for (int64_t nkv : {1, 17, 64, 65, 127, 128, 129, 300, 1000})
      for (bool causal : {false, true}) {
        const Dims s = dims(1, nq, nkv, 1, 1, 64, causal);
        for (int64_t n0 = 0; n0 < nq; n0 += bm) {
          const auto kb = attention::fa3::key_blocks(nq, nkv, causal, n0, bm, bn);
          if (kb.count == 0) continue;
          const int64_t jb = kb.count - 1;  // the first block visited
          for (int wg = 0; wg < 2; ++wg) {
            const int64_t first = n0 + 64 * wg;
            bool any_second_half = false;  // a row of the warpgroup (below nq) sees such a key
            for (int64_t n = first; n < std::min<int64_t>(first + 64, nq); ++n)
              for (int64_t j = jb * bn + bn / 2; j < (jb + 1) * bn; ++j)
                any_second_half |= j < nkv && j < s.visible_keys(n);
            const bool trim = attention::fa3::first_half_only(nq, nkv, causal, first, 64, jb, bn);
            // Trimming a half some row sees would lose its keys: never.
            ASSERT_FALSE(trim && any_second_half)
                << nq << " " << nkv << " " << causal << " n0 " << n0 << " wg " << wg;
            // Rows past nq count as seeing keys (their last key is extrapolated): the trim is
            // conservative there, exact for whole tiles.
            if (first + 64 <= nq)
              ASSERT_EQ(trim, !any_second_half)
                  << nq << " " << nkv << " " << causal << " n0 " << n0 << " wg " << wg;
          }
        }
      }
  for (int64_t n0 = 0; n0 < 4096; n0 += bm) {
    const int64_t jb = attention::fa3::key_blocks(4096, 4096, true, n0, bm, bn).count - 1;
    EXPECT_TRUE(attention::fa3::first_half_only(4096, 4096, true, n0, 64, jb, bn));
    EXPECT_FALSE(attention::fa3::first_half_only(4096, 4096, true, n0 + 64, 64, jb, bn));
    EXPECT_FALSE(attention::fa3::first_half_only(4096, 4096, false, n0, 64, 31, bn));
  }
}

// The 4-D tensor maps: coordinates (d, h, n, b) through the strides address the family's
// (B, N, H, D) element; a box is one panel of the tile (the stage's transaction bytes); strides
// are multiples of 16 (the TMA's rule) and nest.
TEST(AttentionFa3Tiles, TokenMapsAddressTheFamilysArrays) {
  for (const Dims& s : {dims(2, 129, 300, 4, 2, 64, true), dims(3, 1000, 1000, 5, 1, 128, false),
                        dims(1, 17, 8192, 8, 2, 256, true)}) {
    for (bool q : {true, false}) {
      const int64_t n_len = q ? s.nq : s.nkv, heads = q ? s.hq : s.hkv;
      const int rows = q ? 128 : (s.d == 256 ? 64 : 128);
      const attention::fa3::TokenMap m = attention::fa3::token_map(s.b, n_len, heads, s.d, rows);
      EXPECT_EQ(m.dims[0], uint64_t(s.d));
      EXPECT_EQ(m.dims[1], uint64_t(heads));
      EXPECT_EQ(m.dims[2], uint64_t(n_len));
      EXPECT_EQ(m.dims[3], uint64_t(s.b));
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(m.strides[i] % 16, 0u);
        EXPECT_GE(m.strides[i], (i == 0 ? 2 : m.strides[i - 1]) * m.dims[i]);
      }
      EXPECT_EQ(m.box[0] * 2, attention::fa3::kRowBytes);  // the 128-byte swizzle span
      EXPECT_EQ(m.box[1], 1u);
      EXPECT_EQ(m.box[2], uint32_t(rows));
      EXPECT_EQ(m.box[3], 1u);
      for (int64_t bi : {int64_t(0), s.b - 1})
        for (int64_t n : {int64_t(0), n_len / 2, n_len - 1})
          for (int64_t h : {int64_t(0), heads - 1})
            for (int64_t d : {int64_t(0), int64_t(63), s.d - 1}) {
              const uint64_t at = uint64_t(d) * 2 + uint64_t(h) * m.strides[0] +
                                  uint64_t(n) * m.strides[1] + uint64_t(bi) * m.strides[2];
              EXPECT_EQ(at, uint64_t(((bi * n_len + n) * heads + h) * s.d + d) * 2);
            }
    }
  }
  // A Q box and a K/V box deliver one panel of their tiles each.
  static_assert(attention::fa3::Tiles<128>::Q::kPanelBytes == 128 * 64 * 2);
  static_assert(attention::fa3::Tiles<256>::KV::kPanelBytes == 64 * 64 * 2);
}

// ---- v05 (FA3's overlaps): the ping-pong's named barriers, the rounds, the budgets ----

namespace {

// One consumer warpgroup's ping-pong operations for a tile of n key blocks, as v05's consumer
// issues them (fa3_schedule.hpp): an opening arrive, then per round a wait, the round's wgmma, an
// arrive. arrive_after_last: the wrong variant that also arrives after the last warpgroup's last
// round (the model must catch it).
struct PingPongOp {
  enum Kind { kArrive, kSync, kIssue } kind;
  int id_or_round;
};
std::vector<PingPongOp> pingpong_program(int wg, int n, bool arrive_after_last = false,
                                         int consumers = attention::fa3::kConsumerWarpgroups) {
  namespace fa3 = attention::fa3;
  std::vector<PingPongOp> ops;
  if (fa3::pingpong_opens(wg, consumers))
    ops.push_back({PingPongOp::kArrive, fa3::pingpong_arrive_id(wg, consumers)});
  for (int r = 0; r < n; ++r) {
    ops.push_back({PingPongOp::kSync, fa3::pingpong_wait_id(wg)});
    ops.push_back({PingPongOp::kIssue, r});
    if (fa3::pingpong_arrives_after(wg, r, n, consumers) || arrive_after_last)
      ops.push_back({PingPongOp::kArrive, fa3::pingpong_arrive_id(wg, consumers)});
  }
  return ops;
}

// Runs both warpgroups' programs against a model of the hardware barriers (bar.sync waits until
// the barrier's thread count is reached, bar.arrive adds its warps' threads without waiting; a
// completed phase resets the count), stepping the warpgroups in the order `pick` chooses among
// the runnable ones. Returns the (warpgroup, round) issue order; leftover: threads still counted
// on some barrier at the end; stuck: whether a warpgroup never finished.
struct PingPongRun {
  std::vector<std::pair<int, int>> issued;
  int leftover = 0;
  bool stuck = false, phase_without_waiter = false;
};
PingPongRun run_pingpong_programs(std::vector<std::vector<PingPongOp>> prog, unsigned seed);
PingPongRun run_pingpong(int n, unsigned seed, bool arrive_after_last = false,
                         int consumers = attention::fa3::kConsumerWarpgroups) {
  std::vector<std::vector<PingPongOp>> prog;
  for (int wg = 0; wg < consumers; ++wg)
    prog.push_back(pingpong_program(wg, n, arrive_after_last, consumers));
  return run_pingpong_programs(prog, seed);
}
PingPongRun run_pingpong_programs(std::vector<std::vector<PingPongOp>> prog, unsigned seed) {
  namespace fa3 = attention::fa3;
  const int kWgs = int(prog.size()), kWgThreads = 128;
  std::vector<size_t> pc(kWgs, 0);
  std::vector<bool> waiting(kWgs, false);
  std::map<int, int> count;  // barrier id -> threads arrived in its current phase
  PingPongRun run;
  std::mt19937 rng(seed);
  auto complete = [&](int id) {  // the phase completes: its waiters pass
    count[id] = 0;
    bool any = false;
    for (int w = 0; w < kWgs; ++w)
      if (waiting[w] && prog[w][pc[w]].id_or_round == id) waiting[w] = false, ++pc[w], any = true;
    run.phase_without_waiter |= !any;
  };
  for (;;) {
    std::vector<int> runnable;
    for (int w = 0; w < kWgs; ++w)
      if (pc[w] < prog[w].size() && !waiting[w]) runnable.push_back(w);
    if (runnable.empty()) break;
    const int w = runnable[rng() % runnable.size()];
    const PingPongOp op = prog[w][pc[w]];
    if (op.kind == PingPongOp::kIssue) {
      run.issued.push_back({w, op.id_or_round});
      ++pc[w];
    } else {
      count[op.id_or_round] += kWgThreads;
      if (op.kind == PingPongOp::kSync)
        waiting[w] = true;
      else
        ++pc[w];
      EXPECT_LE(count[op.id_or_round], fa3::kPingPongThreads);
      if (count[op.id_or_round] == fa3::kPingPongThreads) complete(op.id_or_round);
    }
  }
  for (int w = 0; w < kWgs; ++w) run.stuck |= pc[w] < prog[w].size();
  for (const auto& [id, c] : count) run.leftover += c;
  return run;
}

}  // namespace

// The ping-pong: whatever order the warpgroups run in, their rounds reach the tensor pipe
// alternately (wg 0's round r, wg 1's round r, wg 0's round r + 1, ...), every bar.sync meets
// one arrive, and no barrier is left half-arrived when the block exits (a later block on the SM
// would inherit it). The wrong variant that arrives after the last round leaves one behind.
TEST(AttentionFa3Schedule, PingPongAlternatesTheConsumersAndBalancesItsBarriers) {
  namespace fa3 = attention::fa3;
  EXPECT_EQ(fa3::kPingPongBarrier0, 1);  // 0 is __syncthreads'
  EXPECT_NE(fa3::pingpong_wait_id(0), fa3::pingpong_wait_id(1));
  EXPECT_EQ(fa3::pingpong_arrive_id(0), fa3::pingpong_wait_id(1));
  EXPECT_EQ(fa3::pingpong_arrive_id(1), fa3::pingpong_wait_id(0));
  for (int wg = 0; wg < fa3::kConsumerWarpgroups; ++wg) EXPECT_LE(fa3::pingpong_wait_id(wg), 15);
  EXPECT_EQ(fa3::kPingPongThreads % 32, 0);
  // v11's P barriers: one per consumer warpgroup, none a ping-pong barrier or __syncthreads'.
  for (int wg = 0; wg < 3; ++wg) {
    EXPECT_GT(fa3::p_ready_id(wg), fa3::pingpong_wait_id(2));
    EXPECT_LE(fa3::p_ready_id(wg), 15);
    if (wg > 0) EXPECT_EQ(fa3::p_ready_id(wg), fa3::p_ready_id(wg - 1) + 1);
  }
  // Two consumer warpgroups (v04-v08) and three (v09 at D = 64): the rounds go round in turn.
  for (int wgs : {2, 3}) {
    for (int wg = 0; wg < wgs; ++wg) {
      EXPECT_EQ(fa3::pingpong_arrive_id(wg, wgs), fa3::pingpong_wait_id((wg + 1) % wgs));
      EXPECT_LE(fa3::pingpong_wait_id(wg), 15);
    }
    for (int n = 1; n <= 7; ++n)
      for (unsigned seed = 0; seed < 20; ++seed) {
        const PingPongRun run = run_pingpong(n, seed, false, wgs);
        ASSERT_FALSE(run.stuck) << wgs << " wgs, n " << n << " seed " << seed;
        ASSERT_EQ(run.leftover, 0) << wgs << " wgs, n " << n << " seed " << seed;
        ASSERT_FALSE(run.phase_without_waiter) << wgs << " wgs, n " << n << " seed " << seed;
        ASSERT_EQ(run.issued.size(), size_t(wgs * n));
        for (int i = 0; i < wgs * n; ++i)
          ASSERT_EQ(run.issued[i], std::make_pair(i % wgs, i / wgs))
              << wgs << " wgs, n " << n << " seed " << seed;
      }
    const PingPongRun wrong = run_pingpong(3, 1, /*arrive_after_last*/ true, wgs);
    EXPECT_NE(wrong.leftover, 0) << wgs << " wgs";
  }
}

// The rounds inside a consumer: S of every block once, in ring order, P V of every block once,
// each P_j V_j issued after S_{j+1} (so block j + 1's softmax runs under it) and after its own S
// and softmax; the stage of block j goes back once P_j V_j is done, in block order.
TEST(AttentionFa3Schedule, OverlapRoundsIssueEachProductOnceInOrder) {
  namespace fa3 = attention::fa3;
  for (int n = 1; n <= 6; ++n) {
    std::vector<std::pair<char, int>> issued;  // ('S' | 'P', block)
    for (int r = 0; r < n; ++r) {
      const fa3::Round round = fa3::overlap_round(r);
      issued.push_back({'S', round.s_block});
      if (round.pv_block >= 0) issued.push_back({'P', round.pv_block});
    }
    issued.push_back({'P', n - 1});  // after the rounds
    auto at = [&](char what, int block) {
      const auto it = std::find(issued.begin(), issued.end(), std::make_pair(what, block));
      EXPECT_EQ(std::count(issued.begin(), issued.end(), std::make_pair(what, block)), 1)
          << what << block << " n " << n;
      return it - issued.begin();
    };
    for (int j = 0; j < n; ++j) {
      EXPECT_LT(at('S', j), at('P', j)) << "n " << n << " block " << j;
      if (j > 0) {
        EXPECT_LT(at('S', j - 1), at('S', j));
        EXPECT_LT(at('P', j - 1), at('P', j));
      }
      if (j + 1 < n) {
        EXPECT_LT(at('S', j + 1), at('P', j)) << "n " << n << " block " << j;
      }
    }
    EXPECT_EQ(issued.size(), size_t(2 * n));
  }
}

namespace {

// A model of the FA3 rungs' K/V ring in consumer ticks, three a round: a round's wgmma issue
// (it needs its loads issued), its wait_group 1 (S done), its wait_group 0 (P V done). The
// producer issues its loads in program order (kv_step), each as soon as the slot's previous
// occupant (the same kind's block `stages` earlier) has been handed back, never before the load
// ahead of it in its order. Both consumers run in lockstep (the later one releases a slot: the
// model's one consumer stands for it). A consumer stalls at a tick whose loads are not issued.
// lead: ticks between a load's issue and the tick that needs it (3 = a whole round ahead; 0: the
// consumer waits the load's whole latency).
enum class RingRelease {
  kSplit,  // v05: K after its S (wait_group 1), V after its P V (wait_group 0)
  kJoint,  // v05's first form: K and V of a block after its P V
};
struct RingRun {
  int min_lead = 1 << 30;  // over the loads after the first lap of the ring
  int stalls = 0;
  bool deadlock = false;
};
// v05's rounds over n key blocks: round 0 issues S_0; round r >= 1 issues S_r and P_{r-1} V_{r-1};
// the last P V is a round of its own.
// A consumer tick: the loads it needs issued, the ones it hands back. Loads are (kind: 0 K,
// 1 V, 2 Q; block or tile).
struct RingTick {
  std::vector<std::pair<int, int>> needs, releases;
};
// Runs the ticks against the producer's loads in order; a load of kind k replaces the one lap(k)
// before it in its ring.
template <class Lap>
RingRun run_ticks(const std::vector<RingTick>& ticks, const std::vector<std::pair<int, int>>& loads,
                  Lap&& lap) {
  std::map<std::pair<int, int>, int> issued_at, released_at;
  size_t next_load = 0, tick = 0;
  RingRun run;
  for (int time = 0; tick < ticks.size(); ++time) {
    if (time > 100 * int(ticks.size())) {
      run.deadlock = true;
      break;
    }
    // The producer: every load whose slot is free, in order.
    while (next_load < loads.size()) {
      const auto [kind, id] = loads[next_load];
      if (id >= lap(kind) && !released_at.count({kind, id - lap(kind)})) break;
      issued_at[loads[next_load++]] = time;
    }
    // The consumer: the next tick, if its loads are issued.
    bool ready = true;
    for (const auto& need : ticks[tick].needs) ready &= issued_at.count(need) > 0;
    if (!ready) {
      ++run.stalls;
      continue;
    }
    for (const auto& need : ticks[tick].needs)
      if (need.second >= lap(need.first))
        run.min_lead = std::min(run.min_lead, time - issued_at[need]);
    for (const auto& rel : ticks[tick].releases) released_at[rel] = time;
    ++tick;
  }
  return run;
}

RingRun run_ring(int n, int stages, int lag, RingRelease release) {
  namespace fa3 = attention::fa3;
  std::vector<RingTick> ticks;
  for (int r = 0; r <= n; ++r) {
    RingTick issue, wait1, wait0;
    if (r < n) issue.needs.push_back({0, r});
    if (r > 0) issue.needs.push_back({1, r - 1});
    if (release == RingRelease::kSplit) {
      if (r < n) wait1.releases.push_back({0, r});
    } else if (r > 0) {
      wait0.releases.push_back({0, r - 1});
    }
    if (r > 0) wait0.releases.push_back({1, r - 1});
    ticks.insert(ticks.end(), {issue, wait1, wait0});
  }
  std::vector<std::pair<int, int>> loads;  // producer program order
  for (int j = 0; j < fa3::kv_steps(n, lag); ++j) {
    const fa3::KvStep st = fa3::kv_step(j, n, lag);
    if (st.k_block >= 0) loads.push_back({0, st.k_block});
    if (st.v_block >= 0) loads.push_back({1, st.v_block});
  }
  return run_ticks(ticks, loads, [stages](int) { return stages; });
}

}  // namespace

// The K/V ring's load-ahead. v05 hands K back after its S and V after its P V and loads V one
// block behind K: every load after the first lap is issued at least a round (3 ticks) before the
// wgmma that reads it, at two stages (D = 256) as at three. v05's first form (one release per
// stage after P V) had at two stages a lead of 0: block j + 1's K issued when round j + 1
// needs it, so a consumer waits a load's whole latency every round.
TEST(AttentionFa3Schedule, SplitReleaseKeepsEveryLoadARoundAhead) {
  namespace fa3 = attention::fa3;
  for (int n : {3, 4, 8, 17})
    for (int stages : {2, 3}) {
      const RingRun run = run_ring(n, stages, fa3::kOverlapKvLag, RingRelease::kSplit);
      ASSERT_FALSE(run.deadlock) << "n " << n << " stages " << stages;
      EXPECT_EQ(run.stalls, 0) << "n " << n << " stages " << stages;
      EXPECT_GE(run.min_lead, 3) << "n " << n << " stages " << stages;
    }
  const RingRun joint = run_ring(8, 2, fa3::kOverlapKvLag, RingRelease::kJoint);
  ASSERT_FALSE(joint.deadlock);
  EXPECT_LT(joint.min_lead, 3);
  // The producer's steps load every block's K and V once, K_j before V_j.
  for (int lag : {0, 1})
    for (int n : {0, 1, 2, 5}) {
      std::vector<int> k_seen, v_seen;
      for (int j = 0; j < fa3::kv_steps(n, lag); ++j) {
        const fa3::KvStep st = fa3::kv_step(j, n, lag);
        if (st.k_block >= 0) k_seen.push_back(st.k_block);
        if (st.v_block >= 0) {
          EXPECT_NE(std::find(k_seen.begin(), k_seen.end(), st.v_block), k_seen.end());
          v_seen.push_back(st.v_block);
        }
      }
      std::vector<int> all(n);
      for (int j = 0; j < n; ++j) all[j] = j;
      EXPECT_EQ(k_seen, all) << "lag " << lag << " n " << n;
      EXPECT_EQ(v_seen, all) << "lag " << lag << " n " << n;
    }
}

// ---- v06 (persistent): the line of tiles, its scheduling, the ring and ping-pong across tiles ----

namespace {

// One consumer warpgroup's ping-pong across a persistent block's tiles (v06): the opening arrive
// once, every round followed by an arrive, the closing wait once. close: the wrong variant
// without it when false.
std::vector<PingPongOp> pingpong_line_program(int wg, const std::vector<int>& tiles,
                                              bool close = true) {
  namespace fa3 = attention::fa3;
  std::vector<PingPongOp> ops;
  if (fa3::pingpong_opens(wg)) ops.push_back({PingPongOp::kArrive, fa3::pingpong_arrive_id(wg)});
  int round = 0;
  for (int n : tiles)
    for (int r = 0; r < n; ++r) {
      ops.push_back({PingPongOp::kSync, fa3::pingpong_wait_id(wg)});
      ops.push_back({PingPongOp::kIssue, round++});
      ops.push_back({PingPongOp::kArrive, fa3::pingpong_arrive_id(wg)});
    }
  if (close && fa3::pingpong_closes(wg))
    ops.push_back({PingPongOp::kSync, fa3::pingpong_wait_id(wg)});
  return ops;
}

// The longest makespan of `workers` blocks taking the tiles of weights w in line order: each
// next tile to the block that is free first (the atomic counter: ties to the lowest block, as
// any order), or block b the tiles b, b + workers, ... (a static stride).
double makespan(const std::vector<double>& w, int workers, bool dynamic) {
  std::vector<double> busy(workers, 0.0);
  for (size_t t = 0; t < w.size(); ++t) {
    const size_t b = dynamic ? size_t(std::min_element(busy.begin(), busy.end()) - busy.begin())
                             : t % size_t(workers);
    busy[b] += w[t];
  }
  return *std::max_element(busy.begin(), busy.end());
}

/// A line's tile inside the grid of (query tile, head, batch).
bool tile_within(const attention::fa3::TileLine::Tile& c, int64_t m_tiles, int64_t heads,
                 int64_t batch) {
  return c.m_tile >= 0 && c.m_tile < m_tiles && c.h >= 0 && c.h < heads && c.bi >= 0 &&
         c.bi < batch;
}
}  // namespace

// The line: every (query tile, head, batch) once; sections of consecutive (batch, head) pairs,
// their K and V within the L2 budget; inside a section the query tiles from the last (under the
// causal mask, the one with the most key blocks) down, the section's pairs fastest.
TEST(AttentionFa3Persistent, LineVisitsEveryTileOnceHeaviestFirstInSections) {
  namespace fa3 = attention::fa3;
  for (auto [m_tiles, heads, batch, section] :
       {std::array<int64_t, 4>{32, 32, 8, 16}, {5, 3, 2, 4}, {7, 1, 1, 1}, {3, 4, 5, 20}}) {
    const fa3::TileLine line{m_tiles, heads, batch, std::min(section, heads * batch)};
    std::set<std::array<int64_t, 3>> seen;
    int64_t prev_section = -1, prev_m = 0;
    for (int64_t t = 0; t < line.tiles(); ++t) {
      const fa3::TileLine::Tile c = line.at(t);
      ASSERT_TRUE(tile_within(c, m_tiles, heads, batch)) << "t " << t;
      seen.insert({c.m_tile, c.h, c.bi});
      const int64_t pair = int64_t(c.bi) * heads + c.h, sec = pair / line.section;
      ASSERT_GE(sec, prev_section) << "sections one after another, t " << t;
      if (sec == prev_section) {
        ASSERT_LE(c.m_tile, prev_m) << "heaviest first, t " << t;
      }
      prev_section = sec;
      prev_m = c.m_tile;
    }
    EXPECT_EQ(int64_t(seen.size()), line.tiles());
  }
  // Section sizes: N = 4k, D = 128, bf16: 2 MiB of K and V a head, 16 heads in 32 MiB; grouped
  // query heads share theirs (group 4: 64); never 0, never more than every pair.
  EXPECT_EQ(fa3::section_pairs(32 << 20, 4096, 128, 2, 1, 256), 16);
  EXPECT_EQ(fa3::section_pairs(32 << 20, 4096, 128, 2, 4, 256), 64);
  EXPECT_EQ(fa3::section_pairs(32 << 20, 1 << 20, 256, 2, 1, 8), 1);
  EXPECT_EQ(fa3::section_pairs(32 << 20, 16, 64, 2, 1, 12), 12);
}

// Scheduling the line (N = 4k causal, 128 x 128 tiles: tile weights are key blocks plus a few
// blocks' worth of fixed cost, 132 blocks): the counter's makespan is within one tile of a
// perfect split, and beats a static stride over the same line. Lightest-first (the wrong order)
// ends with heavy tiles and misses that bound.
TEST(AttentionFa3Persistent, CounterOverHeaviestFirstBalancesTheBlocks) {
  namespace fa3 = attention::fa3;
  const int64_t nq = 4096, m_tiles = nq / 128, heads = 32, batch = 8;
  const fa3::TileLine line{m_tiles, heads, batch,
                           fa3::section_pairs(32 << 20, nq, 128, 2, 1, heads * batch)};
  std::vector<double> heavy_first, light_first;
  double total = 0, heaviest = 0;
  for (int64_t t = 0; t < line.tiles(); ++t) {
    const auto kb = fa3::key_blocks(nq, nq, true, line.at(t).m_tile * 128, 128, 128);
    const double w = double(kb.count) + 3.0;
    heavy_first.push_back(w);
    total += w;
    heaviest = std::max(heaviest, w);
  }
  // The same sections, each walked from its lightest tile.
  const int64_t per_section = line.section * m_tiles;
  for (int64_t first = 0; first < line.tiles(); first += per_section)
    for (int64_t t = std::min(line.tiles(), first + per_section) - 1; t >= first; --t)
      light_first.push_back(heavy_first[size_t(t)]);
  const int blocks = 132;
  const double ideal = total / blocks;
  const double dynamic = makespan(heavy_first, blocks, true);
  EXPECT_LE(dynamic, ideal + heaviest);
  EXPECT_LE(dynamic, makespan(heavy_first, blocks, false));
  EXPECT_GT(makespan(light_first, blocks, true), dynamic);
}

// v20's line (ShortFirstLine): every tile once; the short section (pairs % section) first, then
// whole sections, each heaviest first with its pairs fastest; the line ends on a whole section;
// without a remainder, TileLine's order. Dispatched greedily over 132 SMs at causal 4k (256
// pairs, 12 a section), it ends no later than TileLine's, whose last, short section starts its
// heaviest tiles in the last wave.
TEST(AttentionFa3Persistent, ShortFirstLineEndsOnAWholeSection) {
  namespace fa3 = attention::fa3;
  for (auto [m_tiles, heads, batch, section] : {std::array<int64_t, 4>{32, 32, 8, 12},
                                                {5, 3, 2, 4},
                                                {7, 1, 1, 1},
                                                {3, 4, 5, 20},
                                                {4, 4, 4, 8}}) {
    const fa3::ShortFirstLine line{{m_tiles, heads, batch, std::min(section, heads * batch)}};
    const int64_t pairs = heads * batch, lead = pairs % line.line.section;
    std::set<std::array<int64_t, 3>> seen;
    int64_t prev_group = -1, prev_m = 0;
    for (int64_t t = 0; t < line.tiles(); ++t) {
      const fa3::TileLine::Tile c = line.at(t);
      ASSERT_TRUE(tile_within(c, m_tiles, heads, batch)) << "t " << t;
      seen.insert({c.m_tile, c.h, c.bi});
      const int64_t pair = int64_t(c.bi) * heads + c.h;
      // Group 0: the lead's pairs (if any); then whole sections after it.
      const int64_t group = pair < lead ? 0 : 1 + (pair - lead) / line.line.section;
      ASSERT_GE(group, prev_group) << "sections one after another, t " << t;
      if (group == prev_group) {
        ASSERT_LE(c.m_tile, prev_m) << "heaviest first, t " << t;
      }
      if (t >= line.tiles() - line.line.section * m_tiles) {
        ASSERT_GE(pair, pairs - line.line.section) << "the last section whole, t " << t;
      }
      if (lead == 0) {
        const fa3::TileLine::Tile d = line.line.at(t);
        const bool same = c.m_tile == d.m_tile && c.h == d.h && c.bi == d.bi;
        ASSERT_TRUE(same) << "TileLine's order without a remainder, t " << t;
      }
      prev_group = group;
      prev_m = c.m_tile;
    }
    EXPECT_EQ(int64_t(seen.size()), line.tiles());
  }
  const int64_t nq = 4096, m_tiles = nq / 128;
  const fa3::ShortFirstLine short_first{{m_tiles, 32, 8, 12}};
  auto weights = [&](auto&& line) {
    std::vector<double> w;
    for (int64_t t = 0; t < line.tiles(); ++t)
      w.push_back(double(fa3::key_blocks(nq, nq, true, line.at(t).m_tile * 128, 128, 128).count) +
                  1.5);
    return w;
  };
  EXPECT_LT(makespan(weights(short_first), 132, true),
            makespan(weights(short_first.line), 132, true));
}

// The ring across a persistent block's tiles (v06): Q goes back after a tile's last S, and the
// producer's order per tile (Q, then kv_step's K and V, the ring running on across tiles) issues
// the next tile's Q and first K at least a round ahead, under the tile's last P V and epilogue.
// Ticks as in run_ring, plus an epilogue tick a tile. Wrong variants: Q back after the last P V
// (q_after_pv), or the next tile's Q issued before this tile's last V (q_before_last_v).
namespace {
RingRun run_line_ring(const std::vector<int>& tiles, int stages, bool q_after_pv = false,
                      bool q_before_last_v = false) {
  namespace fa3 = attention::fa3;
  constexpr int kQ = 2;
  std::vector<RingTick> ticks;
  std::vector<std::pair<int, int>> loads;
  int base = 0;  // blocks of the tiles before
  for (int i = 0; i < int(tiles.size()); ++i) {
    const int n = tiles[i];
    for (int r = 0; r <= n; ++r) {
      RingTick issue, wait1, wait0;
      if (r == 0) issue.needs.push_back({kQ, i});
      if (r < n) issue.needs.push_back({0, base + r});
      if (r > 0) issue.needs.push_back({1, base + r - 1});
      if (r < n) wait1.releases.push_back({0, base + r});
      if (r == n - 1 && !q_after_pv) wait1.releases.push_back({kQ, i});
      if (r > 0) wait0.releases.push_back({1, base + r - 1});
      if (r == n && q_after_pv) wait0.releases.push_back({kQ, i});
      ticks.insert(ticks.end(), {issue, wait1, wait0});
    }
    ticks.push_back({});           // the epilogue
    if (q_before_last_v && i > 0)  // this tile's Q ahead of the previous tile's last V
      loads.insert(loads.end() - 1, {kQ, i});
    else
      loads.push_back({kQ, i});
    for (int j = 0; j < fa3::kv_steps(n, fa3::kOverlapKvLag); ++j) {
      const fa3::KvStep st = fa3::kv_step(j, n, fa3::kOverlapKvLag);
      if (st.k_block >= 0) loads.push_back({0, base + st.k_block});
      if (st.v_block >= 0) loads.push_back({1, base + st.v_block});
    }
    base += n;
  }
  return run_ticks(ticks, loads, [stages](int kind) { return kind == kQ ? 1 : stages; });
}
}  // namespace

TEST(AttentionFa3Persistent, NextTilesQAndKLoadUnderTheLastPvAndEpilogue) {
  for (int stages : {2, 3})
    for (const std::vector<int>& tiles :
         {std::vector<int>{4, 4, 4}, {8, 3, 1, 5}, {1, 1, 1, 1}, {17, 2, 9}}) {
      const RingRun run = run_line_ring(tiles, stages);
      ASSERT_FALSE(run.deadlock) << "stages " << stages;
      EXPECT_EQ(run.stalls, 0) << "stages " << stages;
      EXPECT_GE(run.min_lead, 3) << "stages " << stages;
    }
  const std::vector<int> tiles{6, 6, 6};
  const RingRun late_q = run_line_ring(tiles, 2, /*q_after_pv*/ true);
  ASSERT_FALSE(late_q.deadlock);
  EXPECT_LT(late_q.min_lead, 3);
  const RingRun early_q = run_line_ring(tiles, 2, false, /*q_before_last_v*/ true);
  ASSERT_FALSE(early_q.deadlock);
  EXPECT_LT(early_q.min_lead, 3);
}

// The ping-pong across tiles: the rounds of every tile alternate between the warpgroups as one
// sequence (tiles of 0 rounds included), every bar.sync meets one arrive and nothing is left
// half-arrived when the block exits; without the closing wait one arrive is left behind.
TEST(AttentionFa3Persistent, PingPongRunsOnAcrossTilesAndClosesOnce) {
  namespace fa3 = attention::fa3;
  for (const std::vector<int>& tiles :
       {std::vector<int>{}, {0}, {3}, {2, 0, 5, 1}, {1, 1, 1}, {7, 4}})
    for (unsigned seed = 0; seed < 20; ++seed) {
      std::vector<std::vector<PingPongOp>> prog;
      for (int wg = 0; wg < fa3::kConsumerWarpgroups; ++wg)
        prog.push_back(pingpong_line_program(wg, tiles));
      const PingPongRun run = run_pingpong_programs(prog, seed);
      int rounds = 0;
      for (int n : tiles) rounds += n;
      ASSERT_FALSE(run.stuck) << "seed " << seed;
      ASSERT_EQ(run.leftover, 0) << "seed " << seed;
      ASSERT_FALSE(run.phase_without_waiter) << "seed " << seed;
      ASSERT_EQ(run.issued.size(), size_t(2 * rounds));
      for (int i = 0; i < 2 * rounds; ++i)
        ASSERT_EQ(run.issued[i], std::make_pair(i % 2, i / 2)) << "seed " << seed;
    }
  std::vector<std::vector<PingPongOp>> open_end;
  for (int wg = 0; wg < fa3::kConsumerWarpgroups; ++wg)
    open_end.push_back(pingpong_line_program(wg, {2, 3}, /*close*/ false));
  EXPECT_NE(run_pingpong_programs(open_end, 3).leftover, 0);
}

// The budgets. Registers: a consumer thread under setmaxnreg (two consumer warpgroups beside a
// producer at 40: (512 - 40) / 2 rounded down to 8 = 232, pipeline_sm90.cuh) holds O, S and the
// P in flight with room to spare at every D with v04's blocks; holding two S blocks at once (S_{j
// + 1} issued before block j's softmax) would not fit at D = 128. Shared memory: three K/V stages
// fit beside Q at D = 64 and 128, not at D = 256.
TEST(AttentionFa3Schedule, OverlapFitsTheRegisterAndSharedMemoryBudgets) {
  namespace fa3 = attention::fa3;
  constexpr int kConsumerRegs = (16384 / 32 - 40) / 2 / 8 * 8;
  static_assert(kConsumerRegs == 232);
  EXPECT_EQ(fa3::overlap_live_registers(128, 128), 64 + 64 + 32);
  EXPECT_EQ(fa3::overlap_live_registers(256, 64), 128 + 32 + 16);
  EXPECT_TRUE(fa3::overlap_fits(64, fa3::Tiles<64>::kBlockN, kConsumerRegs));
  EXPECT_TRUE(fa3::overlap_fits(128, fa3::Tiles<128>::kBlockN, kConsumerRegs));
  EXPECT_TRUE(fa3::overlap_fits(256, fa3::Tiles<256>::kBlockN, kConsumerRegs));
  const int two_s_blocks = 128 / 2 + 2 * (128 / 2) + 128 / 4;  // O, S_j, S_{j+1}, P
  EXPECT_GT(two_s_blocks + fa3::kConsumerOverheadRegisters, kConsumerRegs);
  EXPECT_LE((fa3::kSmemBytes<fa3::Tiles<64, 3>>), fa3::kMaxSmemBytes);
  EXPECT_LE((fa3::kSmemBytes<fa3::Tiles<128, 3>>), fa3::kMaxSmemBytes);
  // v09 at D = 64: three consumer warpgroups beside a producer at 24 take (512 - 24) / 3 rounded
  // down to 8 = 160 registers; O, S and P hold 128 of them, leaving 32 (less than the 48 the
  // two-warpgroup budget allows: there ptxas's report of no local memory is the check). Its
  // 192-row Q beside three stages fits.
  constexpr int kThreeRegs = (16384 / 32 - 24) / 3 / 8 * 8;
  static_assert(kThreeRegs == 160);
  EXPECT_EQ(fa3::overlap_live_registers(64, fa3::Tiles<64, 3, 192>::kBlockN) + 32, kThreeRegs);
  // v11's 192-key blocks: with P in registers O, S and P would take 176 of the 160; with P in
  // shared memory O and S take v09's 128.
  EXPECT_GT(fa3::overlap_live_registers(64, 192), kThreeRegs);
  EXPECT_EQ(fa3::overlap_live_registers(64, 192, /*P in smem*/ true) + 32, kThreeRegs);
  // v22's 176-key blocks without the intra-warpgroup overlap: O and S (120) with P in
  // registers, and four stages of them beside the 192-row Q.
  EXPECT_EQ(fa3::serial_live_registers(64, fa3::kSerialKeys), 32 + 88);
  EXPECT_LE(fa3::serial_live_registers(64, fa3::kSerialKeys) + 32, kThreeRegs);
  EXPECT_GT(fa3::overlap_live_registers(64, fa3::kSerialKeys), kThreeRegs - 32);
  EXPECT_EQ(fa3::kSerialKeys % 16, 0);  // P V's k16 steps
  EXPECT_LE((fa3::kSmemBytes<fa3::Tiles<64, fa3::kSerialStages, 192, fa3::kSerialKeys>>),
            fa3::kMaxSmemBytes);
  EXPECT_EQ((fa3::Tiles<64, 3, 192>::Q::kBytes), 192u * 128u);
  EXPECT_LE((fa3::kSmemBytes<fa3::Tiles<64, 3, 192>>), fa3::kMaxSmemBytes);
  EXPECT_GT((fa3::kSmemBytes<fa3::Tiles<256, 3>>), fa3::kMaxSmemBytes);
  EXPECT_LE((fa3::kSmemBytes<fa3::Tiles<256, 2>>), fa3::kMaxSmemBytes);
  EXPECT_GT((fa3::kSmemBytes<fa3::Tiles<128, 4>>), fa3::kMaxSmemBytes);
}

namespace {

// What an FA3 rung refuses and takes (RungRefusesWhatTheTmaCannotRead).
void check_fa3_refusals(const Variant& v_ref) {
  const Variant* v = &v_ref;
  EXPECT_EQ(v->info.min_sm, 90);
  const Status off =
      v->can_implement(attention::problem(dims(1, 129, 129, 4, 4, 64, false), DType::bf16, 1));
  EXPECT_NE(off.reason.find("16-byte"), std::string::npos) << off.reason;
  const Status d96 =
      v->can_implement(attention::problem(dims(1, 8, 8, 2, 2, 96, false), DType::bf16));
  EXPECT_NE(d96.reason.find("64, 128 or 256"), std::string::npos) << d96.reason;
  for (const Problem& p : family().headline) EXPECT_TRUE(v->can_implement(p).ok()) << p.str();
  int refused = 0;
  for (const Problem& p : family().awkward) refused += !v->can_implement(p).ok();
  EXPECT_EQ(refused, 1) << "only the misaligned awkward shape";
}

}  // namespace

// v04 to v10 are registered in that order between v03 and the baselines; each refuses what the
// TMA cannot read (a misaligned base) and head dimensions it has no tiles for, with reasons, and
// takes every headline shape.
TEST(AttentionFa3Tiles, RungRefusesWhatTheTmaCannotRead) {
  const auto& ladder = family().ladder;
  const auto at = [&](const char* id) {
    return std::find_if(ladder.begin(), ladder.end(),
                        [&](const Variant& x) { return x.info.id == id; }) -
           ladder.begin();
  };
  if (!family().find("attention.v04_fa3_wgmma"))
    GTEST_SKIP() << "attention.v04_fa3_wgmma is not registered in this build (no CUDA)";
  EXPECT_EQ(at("attention.v04_fa3_wgmma"), at("attention.v03_fa2_mma") + 1);
  EXPECT_EQ(at("attention.v05_fa3_overlap"), at("attention.v04_fa3_wgmma") + 1);
  EXPECT_EQ(at("attention.v06_fa3_persistent"), at("attention.v05_fa3_overlap") + 1);
  EXPECT_EQ(at("attention.v07_fa4_lazy_rescale"), at("attention.v06_fa3_persistent") + 1);
  EXPECT_EQ(at("attention.v08_fa4_poly_exp2"), at("attention.v07_fa4_lazy_rescale") + 1);
  EXPECT_EQ(at("attention.v09_fa3_three_consumers"), at("attention.v08_fa4_poly_exp2") + 1);
  EXPECT_EQ(at("attention.v10_fa4_poly_three_consumers"),
            at("attention.v09_fa3_three_consumers") + 1);
  EXPECT_EQ(at("attention.v11_fa3_wide_keys"), at("attention.v10_fa4_poly_three_consumers") + 1);
  EXPECT_EQ(at("attention.v12_fa3_fp8"), at("attention.v11_fa3_wide_keys") + 1);
  EXPECT_EQ(at("attention.v13_fa2_two_row_tiles"), at("attention.v12_fa3_fp8") + 1);
  EXPECT_EQ(at("attention.v14_fa2_lazy_rescale"), at("attention.v13_fa2_two_row_tiles") + 1);
  EXPECT_EQ(at("attention.v15_fa3_persistent_lazy"), at("attention.v14_fa2_lazy_rescale") + 1);
  EXPECT_EQ(at("attention.v16_fa3_tma_epilogue"), at("attention.v15_fa3_persistent_lazy") + 1);
  EXPECT_EQ(at("attention.v17_fa3_persistent_tma_epilogue"),
            at("attention.v16_fa3_tma_epilogue") + 1);
  EXPECT_EQ(at("attention.v22_fa3_serial_wide_keys"),
            at("attention.v21_fa3_line_small_sections") + 1);
  ASSERT_NE(family().find("attention.v06_fa3_persistent"), nullptr);
  const Variant& v06 = *family().find("attention.v06_fa3_persistent");
  ASSERT_TRUE(bool(v06.workspace_bytes));  // the tile counter
  EXPECT_GE(v06.workspace_bytes(family().headline.front()), 2 * sizeof(int));
  ASSERT_NE(family().find("attention.v15_fa3_persistent_lazy"), nullptr);
  const Variant& v15 = *family().find("attention.v15_fa3_persistent_lazy");
  ASSERT_TRUE(bool(v15.workspace_bytes));
  EXPECT_GE(v15.workspace_bytes(family().headline.front()), 2 * sizeof(int));
  ASSERT_NE(family().find("attention.v17_fa3_persistent_tma_epilogue"), nullptr);
  const Variant& v17 = *family().find("attention.v17_fa3_persistent_tma_epilogue");
  ASSERT_TRUE(bool(v17.workspace_bytes));
  EXPECT_GE(v17.workspace_bytes(family().headline.front()), 2 * sizeof(int));
  for (const char* id :
       {"attention.v04_fa3_wgmma", "attention.v05_fa3_overlap", "attention.v06_fa3_persistent",
        "attention.v07_fa4_lazy_rescale", "attention.v08_fa4_poly_exp2",
        "attention.v11_fa3_wide_keys", "attention.v15_fa3_persistent_lazy",
        "attention.v16_fa3_tma_epilogue", "attention.v22_fa3_serial_wide_keys"}) {
    SCOPED_TRACE(id);
    const Variant* v = family().find(id);
    ASSERT_NE(v, nullptr);
    check_fa3_refusals(*v);
  }
}

// attention.baseline_cudnn's description of the family's tensors (cudnn_sdpa_layout.hpp), checked
// without cuDNN: causal both ways (Nq > Nkv slices off the empty rows), grouped-query heads.
std::vector<Dims> cudnn_layout_cases() {
  return {dims(2, 7, 7, 4, 2, 8, false),  dims(2, 5, 9, 6, 2, 16, true),
          dims(3, 9, 4, 4, 1, 8, true),   dims(1, 9, 4, 2, 2, 8, false),
          dims(2, 1, 13, 8, 2, 24, true), dims(1, 6, 1, 3, 3, 8, true)};
}

// Every element cuDNN addresses, (b, h, n', i) through offset + sum of index x stride, is the
// family's element of query row n = n' + empty_rows (Q, O, lse) or key row n' (K, V): each
// non-empty row once, no empty row.
TEST(AttentionCudnnLayout, StridesAddressTheFamilysArrays) {
  for (const Dims& s : cudnn_layout_cases()) {
    const attention::SdpaLayout l = attention::sdpa_layout(s, 2);
    const int64_t e = l.empty_rows;
    EXPECT_EQ(e, s.causal && s.nq > s.nkv ? s.nq - s.nkv : 0);
    auto addr = [](const attention::SdpaTensor& t, int64_t b, int64_t h, int64_t n, int64_t i) {
      return t.offset + b * t.stride[0] + h * t.stride[1] + n * t.stride[2] + i * t.stride[3];
    };
    std::set<int64_t> q_seen, lse_seen;
    ASSERT_EQ(l.q.dim, (std::array<int64_t, 4>{s.b, s.hq, s.nq - e, s.d}));
    ASSERT_EQ(l.k.dim, (std::array<int64_t, 4>{s.b, s.hkv, s.nkv, s.d}));
    ASSERT_EQ(l.stats.dim, (std::array<int64_t, 4>{s.b, s.hq, s.nq - e, 1}));
    EXPECT_EQ(l.o.dim, l.q.dim);
    EXPECT_EQ(l.o.stride, l.q.stride);
    EXPECT_EQ(l.v.stride, l.k.stride);
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t h = 0; h < s.hq; ++h)
        for (int64_t n = 0; n < s.nq - e; ++n) {
          for (int64_t i = 0; i < s.d; ++i) {
            const int64_t want = ((b * s.nq + n + e) * s.hq + h) * s.d + i;
            EXPECT_EQ(addr(l.q, b, h, n, i), want);
            q_seen.insert(addr(l.q, b, h, n, i));
          }
          EXPECT_EQ(addr(l.stats, b, h, n, 0), (b * s.hq + h) * s.nq + n + e);
          lse_seen.insert(addr(l.stats, b, h, n, 0));
        }
    EXPECT_EQ(static_cast<int64_t>(q_seen.size()), s.b * s.hq * (s.nq - e) * s.d);
    EXPECT_EQ(static_cast<int64_t>(lse_seen.size()), s.b * s.hq * (s.nq - e));
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t h = 0; h < s.hkv; ++h)
        for (int64_t n = 0; n < s.nkv; ++n)
          for (int64_t i = 0; i < s.d; ++i)
            EXPECT_EQ(addr(l.k, b, h, n, i), ((b * s.nkv + n) * s.hkv + h) * s.d + i);
  }
}

// cuDNN's bottom-right causal mask on the slice (s_q = Nq - empty_rows <= s_kv, which it
// requires) lets row n' see keys j <= n' + s_kv - s_q: the family's mask of row n' + empty_rows;
// the rows left out are exactly the family's empty ones.
TEST(AttentionCudnnLayout, TheSliceKeepsTheFamilysCausalMask) {
  for (const Dims& s : cudnn_layout_cases()) {
    if (!s.causal) continue;
    const attention::SdpaLayout l = attention::sdpa_layout(s, 2);
    const int64_t sq = l.q.dim[2], skv = l.k.dim[2];
    EXPECT_LE(sq, skv);
    for (int64_t n = 0; n < l.empty_rows; ++n) EXPECT_EQ(s.visible_keys(n), 0) << n;
    for (int64_t n = 0; n < sq; ++n)
      EXPECT_EQ(std::min(n + skv - sq + 1, skv), s.visible_keys(n + l.empty_rows)) << n;
  }
}

// The alignment each tensor's pointer and strides guarantee: 16 bytes for Q, K, V, O at D a
// multiple of 8 (what cuDNN's kernels assume), less for a Stats slice that starts mid-vector.
TEST(AttentionCudnnLayout, AlignmentsAreWhatThePointersGuarantee) {
  const attention::SdpaLayout l = attention::sdpa_layout(dims(2, 300, 127, 4, 1, 64, true), 2);
  EXPECT_EQ(l.empty_rows, 173);
  for (const attention::SdpaTensor* t : {&l.q, &l.k, &l.v, &l.o}) EXPECT_EQ(t->alignment, 16);
  EXPECT_EQ(l.stats.alignment, 4);  // 173 floats in, and rows of 300 floats
  EXPECT_EQ(attention::sdpa_layout(dims(1, 64, 64, 2, 2, 64, true), 2).stats.alignment, 16);
  EXPECT_EQ(attention::sdpa_layout(dims(1, 64, 64, 2, 2, 4, false), 2).q.alignment, 8);
  EXPECT_EQ(attention::alignment_of({48, 0, 32}), 16);
  EXPECT_EQ(attention::alignment_of({12}), 4);
}

// Refused without asking cuDNN: D not a multiple of 8, a misaligned base. Every other awkward
// shape of the family goes to cuDNN (which decides the rest on the device).
TEST(AttentionCudnnLayout, StaticRefusals) {
  const Problem d4 = attention::problem(dims(1, 8, 8, 2, 2, 4, false), DType::bf16);
  EXPECT_NE(attention::sdpa_static_support(d4).reason.find("multiple of 8"), std::string::npos);
  const Problem off = attention::problem(dims(1, 8, 8, 2, 2, 64, false), DType::bf16, 1);
  EXPECT_NE(attention::sdpa_static_support(off).reason.find("16-byte"), std::string::npos);
  EXPECT_TRUE(attention::sdpa_static_support(
                  attention::problem(dims(1, 8, 8, 2, 2, 64, false), DType::f16, 8))
                  .ok());
  int refused = 0;
  for (const Problem& p : family().awkward) refused += !attention::sdpa_static_support(p).ok();
  EXPECT_EQ(refused, 1) << "only the misaligned awkward shape";
  for (const Problem& p : family().headline) EXPECT_TRUE(attention::sdpa_static_support(p).ok());
  // Registered (CUDA builds with cuDNN and its frontend): a baseline of bf16 and f16 whose
  // can_implement gives those reasons before any GPU is asked.
  const Variant* v = family().find("attention.baseline_cudnn");
  if (!v) GTEST_SKIP() << "attention.baseline_cudnn is not registered in this build";
  EXPECT_TRUE(v->info.baseline);
  EXPECT_EQ(v->info.dtypes, (std::vector<DType>{DType::bf16, DType::f16}));
  EXPECT_FALSE(can_run(*v, d4).ok());
  EXPECT_FALSE(can_run(*v, off).ok());
}

// v24's rescale of a row whose largest term t passed what its sum allows (fa3_kernel.cuh's
// max_free_block): the exponent puts t in [1, 2) by an exact power of two (in [2, 4) where it
// stops at 126, so that 2^-e stays normal), leaves a term below 2 (and 0) alone, and alpha is
// 2^-e exactly.
TEST(AttentionMaxFree, ExponentScalesTheLargestTermIntoOneToTwo) {
  using attention::max_free_alpha;
  using attention::max_free_exponent;
  EXPECT_EQ(attention::kLazyTermBound, std::ldexp(1.f, int(attention::kLazyRescaleLog2)));
  for (float t : {0.f, 1e-30f, 0.5f, 1.f, 1.5f, std::nextafter(2.f, 0.f)})
    EXPECT_EQ(max_free_exponent(t), 0) << t;
  const float big = std::numeric_limits<float>::max();
  for (float t :
       {2.f, 3.f, 255.9f, 256.f, std::nextafter(256.f, 1e9f), 257.f, 511.99f, 512.f, 1e10f, 3.5e37f,
        std::ldexp(1.f, 126), std::ldexp(1.f, 127), std::nextafter(big, 0.f), big}) {
    const int e = max_free_exponent(t);
    int fe = 0;
    (void)std::frexp(t, &fe);  // t = f 2^fe, f in [0.5, 1)
    EXPECT_EQ(e, std::min(fe - 1, 126)) << t;
    EXPECT_GE(e, 1) << t;
    const float scaled = std::ldexp(t, -e);
    EXPECT_GE(scaled, 1.f) << t;
    EXPECT_LT(scaled, e < 126 ? 2.f : 4.f) << t;
    EXPECT_EQ(std::ldexp(scaled, e), t) << t << ": the scaling is exact";
    EXPECT_EQ(t * max_free_alpha(e), scaled) << t;
  }
  for (int e = 0; e <= 126; ++e) {
    EXPECT_EQ(max_free_alpha(e), std::ldexp(1.f, -e)) << e;
    EXPECT_EQ(std::fpclassify(max_free_alpha(e)), FP_NORMAL) << e;
  }
}

// The add_rmsnorm_quant family: its fp64 reference on rows computed by hand (per token, per
// group, an all-zero row), the e4m3 encoding at its edges (ties, subnormals, saturation), the
// residual builder (zero rows, outliers), the sampled reference against the whole one, the
// counts, the shapes and dimensions it takes, the GPU rungs' refusals, and checks that catch
// wrong rungs (truncation instead of rounding, a scale 1% off, a residual one ulp off, NaN on a
// zero row, one scale per token where the problem asks per group).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "kernels/add_rmsnorm_quant/family.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/runner.hpp"
#include "tests/cpu/sampled_reference_check.hpp"

using namespace klab;
using add_rmsnorm_quant::Dims;

namespace {

const Family& family() { return registry().family("add_rmsnorm_quant"); }

Problem shape(int64_t tokens, int64_t hidden, int64_t group, int64_t zero_rows = 0,
              int64_t outlier = 0) {
  return add_rmsnorm_quant::problem(Dims{tokens, hidden, group, zero_rows, outlier});
}

// Host buffers of p with x, residual and weight from fx(r, i), fr(r, i), fw(i).
Buffers host_buffers(const Problem& p, const std::function<double(int64_t, int64_t)>& fx,
                     const std::function<double(int64_t, int64_t)>& fr,
                     const std::function<double(int64_t)>& fw) {
  const Dims s = add_rmsnorm_quant::dims_of(p);
  Buffers b = make_host_buffers(family(), p);
  for (Tensor& t : b.tensors) t.data = t.host.data();
  for (int64_t r = 0; r < s.tokens; ++r)
    for (int64_t i = 0; i < s.hidden; ++i) {
      store_from_double(b["x"].host.data(), DType::bf16, r * s.hidden + i, fx(r, i));
      store_from_double(b["residual"].host.data(), DType::bf16, r * s.hidden + i, fr(r, i));
    }
  for (int64_t i = 0; i < s.hidden; ++i)
    store_from_double(b["weight"].host.data(), DType::bf16, i, fw(i));
  return b;
}

Reference whole(const Problem& p, const Buffers& b) {
  Reference r;
  family().reference(p, b, r);
  return r;
}

const double kW[8] = {1, -1, 0.5, 2, 0.25, 1, 1, 1};         // max |w| = 2: q = w * 224
const double kW2[8] = {0.5, -0.25, 0.125, 0.5, 0, 0, 0, 0};  // max |w| = 0.5: q = w * 896

// y = h / sqrt(mean(h^2) + eps) * w with h = 2 everywhere: y = c w.
const double kC = 2 / std::sqrt(4 + 1e-6);

}  // namespace

TEST(AddRmsnormQuant, ReferencePerTokenByHand) {
  const Problem p = shape(1, 8, 0);
  const Buffers b = host_buffers(
      p, [](int64_t, int64_t) { return 1.5; }, [](int64_t, int64_t) { return 0.5; },
      [](int64_t i) { return kW[i]; });
  const Reference ref = whole(p, b);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ref.at("residual_out").value[i], 2.0);
    EXPECT_NEAR(ref.at("q").value[i], kW[i] * 224, 1e-12) << i;  // y / (max |y| / 448)
  }
  ASSERT_EQ(ref.at("scales").value.size(), 1u);
  EXPECT_NEAR(ref.at("scales").value[0], 2 * kC / 448, 1e-15);
}

TEST(AddRmsnormQuant, ReferencePerGroupByHandWithAZeroRow) {
  const Problem p = shape(2, 16, 8);
  // Row 0: h = 2 (1.5 + 0.5); row 1: x = 3, residual = -3, h = 0.
  const Buffers b = host_buffers(
      p, [](int64_t r, int64_t) { return r == 0 ? 1.5 : 3.0; },
      [](int64_t r, int64_t) { return r == 0 ? 0.5 : -3.0; },
      [](int64_t i) { return i < 8 ? kW[i] : kW2[i - 8]; });
  const Reference ref = whole(p, b);
  const auto& q = ref.at("q").value;
  const auto& scales = ref.at("scales").value;
  ASSERT_EQ(scales.size(), 4u);  // (T, H / group)
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_NEAR(q[i], kW[i] * 224, 1e-12) << i;
    EXPECT_NEAR(q[8 + i], kW2[i] * 896, 1e-12) << i;
  }
  EXPECT_NEAR(scales[0], 2 * kC / 448, 1e-15);    // the mean of squares is the row's (4)
  EXPECT_NEAR(scales[1], 0.5 * kC / 448, 1e-15);  // each group its own max
  // The zero row: h = 0 exactly, y = 0, scale 0 and q 0 (never NaN).
  EXPECT_EQ(scales[2], 0.0);
  EXPECT_EQ(scales[3], 0.0);
  for (int64_t i = 16; i < 32; ++i) {
    EXPECT_EQ(ref.at("residual_out").value[i], 0.0);
    EXPECT_EQ(q[i], 0.0);
  }
}

// The residual's rounding: bf16(x + residual) even where fp32 would keep more bits.
TEST(AddRmsnormQuant, ReferenceRoundsTheResidualToBf16) {
  const Problem p = shape(1, 8, 0);
  const Buffers b = host_buffers(
      p, [](int64_t, int64_t i) { return i == 0 ? 1.0 : 0.25; },
      [](int64_t, int64_t i) { return i == 0 ? std::ldexp(1.0, -8) : 0.25; },  // a tie
      [](int64_t) { return 1.0; });
  const Reference ref = whole(p, b);
  EXPECT_EQ(ref.at("residual_out").value[0], 1.0);  // 1 + 2^-8 ties to even: 1
  EXPECT_EQ(ref.at("residual_out").value[1], 0.5);
}

// The encoder the CPU rung uses (klab/core/dtype.hpp) at the edges that the GPU rungs'
// cvt.rn.satfinite.e4m3x2.f32 must match: ties to even in the normal and subnormal ranges,
// saturation to +-448 instead of NaN, signed zero.
TEST(AddRmsnormQuant, E4m3EncodingAtItsEdges) {
  EXPECT_EQ(float_to_e4m3_bits(448.f), 0x7e);
  EXPECT_EQ(float_to_e4m3_bits(464.f), 0x7e);  // the midpoint to 480 (no such value): saturates
  EXPECT_EQ(float_to_e4m3_bits(1e30f), 0x7e);
  EXPECT_EQ(float_to_e4m3_bits(-500.f), 0xfe);
  EXPECT_EQ(float_to_e4m3_bits(432.f), 0x7e);  // between 416 (odd) and 448 (even): 448
  EXPECT_EQ(e4m3_bits_to_float(float_to_e4m3_bits(248.f)), 256.f);           // 240 (odd) / 256
  EXPECT_EQ(float_to_e4m3_bits(1.f + 1.f / 16), 0x38);                       // tie: down to 1
  EXPECT_EQ(e4m3_bits_to_float(float_to_e4m3_bits(1.f + 3.f / 16)), 1.25f);  // tie: up
  EXPECT_EQ(e4m3_bits_to_float(float_to_e4m3_bits(1.f + 1.f / 17)), 1.f);
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(1.f, -6)), 0x08);   // the smallest normal
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(1.f, -9)), 0x01);   // the smallest subnormal
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(1.f, -10)), 0x00);  // tie between 0 and 2^-9: 0
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(1.1f, -10)), 0x01);
  EXPECT_EQ(float_to_e4m3_bits(std::ldexp(3.f, -10)), 0x02);  // tie between 2^-9 and 2^-8
  EXPECT_EQ(float_to_e4m3_bits(0.f), 0x00);
  EXPECT_EQ(float_to_e4m3_bits(-0.f), 0x80);
  EXPECT_EQ(e4m3_bits_to_float(0x80), 0.f);  // dequantises to 0
  // Round to nearest: every value's encoding is within half an ulp, 2^-4 of it (normal range).
  for (float v = 0.02f; v < 448.f; v *= 1.0137f) {
    const float q = e4m3_bits_to_float(float_to_e4m3_bits(v));
    EXPECT_LE(std::fabs(q - v), std::ldexp(v, -4)) << v;
  }
}

TEST(AddRmsnormQuant, ResidualBuilderMakesZeroRowsAndOutliers) {
  const Problem p = shape(40, 256, 0, /*zero_rows*/ 7, /*outlier*/ 65536);
  const Dims s = add_rmsnorm_quant::dims_of(p);
  Buffers b = host_buffers(
      p, [](int64_t r, int64_t i) { return std::sin(static_cast<double>(r * 256 + i)); },
      [](int64_t, int64_t) { return 0.0; }, [](int64_t) { return 1.0; });
  add_rmsnorm_quant::build_residual(s, b["x"], b["residual"], 12345);
  int zero = 0;
  for (int64_t r = 0; r < s.tokens; ++r) {
    bool all_zero = true;
    int outliers = 0;
    for (int64_t i = 0; i < s.hidden; ++i) {
      const double h = b["x"].host_at(r * s.hidden + i) + b["residual"].host_at(r * s.hidden + i);
      all_zero &= h == 0;
      outliers += std::fabs(b["residual"].host_at(r * s.hidden + i)) == 65536;
    }
    zero += all_zero;
    EXPECT_EQ(outliers, all_zero ? 0 : 1) << r;
  }
  EXPECT_EQ(zero, 7);
}

TEST(AddRmsnormQuant, SampledReferenceMatchesTheWhole) {
  const Family& f = family();
  for (const Problem& p : {shape(37, 384, 128, 2, 4096), shape(29, 200, 0, 1)}) {
    Buffers b = host_buffers(
        p, [](int64_t r, int64_t i) { return std::cos(0.37 * static_cast<double>(r * 997 + i)); },
        [](int64_t r, int64_t i) { return std::sin(0.11 * static_cast<double>(r + 3 * i)); },
        [](int64_t i) { return 0.5 + std::fabs(std::sin(static_cast<double>(i))); });
    tests::expect_sampled_reference_matches_whole(f, p, b, whole(p, b),
                                                  {"residual_out", "q", "scales"}, 7);
  }
}

TEST(AddRmsnormQuant, CountsEachTensorOnce) {
  const Counts c = family().counts(shape(16, 4096, 128));
  const double n = 16.0 * 4096;
  EXPECT_EQ(c.bytes, n * 2 * 2 + 4096 * 2 + n * 2 + n + 16 * 32 * 4);
  EXPECT_EQ(c.flops, 7 * n);
  EXPECT_EQ(family().counts(shape(16, 4096, 0)).bytes, n * 7 + 4096 * 2 + 16 * 4);
}

TEST(AddRmsnormQuant, ShapesAndDimensions) {
  const Family& f = family();
  ASSERT_EQ(f.headline.size(), 8u);
  for (int64_t group : {0, 128})
    for (int64_t tokens : {1, 16, 4096, 16384}) {
      bool found = false;
      for (const Problem& p : f.headline)
        found |= p.dim("tokens") == tokens && p.dim("group") == group && p.dim("hidden") == 4096;
      EXPECT_TRUE(found) << tokens << " " << group;
    }
  bool zero_rows = false, outlier = false, all_zero = false;
  for (const Problem& p : f.awkward) {
    EXPECT_NO_THROW(f.validate(p)) << p.str();
    zero_rows |= p.dim("zero_rows") > 0;
    all_zero |= p.dim("zero_rows") == p.dim("tokens");
    outlier |= p.dim("outlier") > 0;
  }
  EXPECT_TRUE(zero_rows && all_zero && outlier);
  // Left-out dimensions take their defaults; a group must divide the row.
  const Problem p = make_problem(f, "tokens=3,hidden=128,group=0", "bf16");
  EXPECT_EQ(p.dim("zero_rows"), 0);
  EXPECT_EQ(p.dim("outlier"), 0);
  EXPECT_THROW(make_problem(f, "tokens=3,hidden=4096,group=100", "bf16"), UsageError);
  EXPECT_THROW(make_problem(f, "tokens=3,hidden=128,group=0,zero_rows=4", "bf16"), UsageError);
  EXPECT_THROW(make_problem(f, "tokens=3,hidden=128,group=0", "f32"), UsageError);
}

TEST(AddRmsnormQuant, ToleranceDerivation) {
  const Problem p = shape(16, 4096, 128);
  const Family& f = family();
  const Tolerance q = f.output_tolerance(p, "q");
  EXPECT_NEAR(q.rtol, 0.0711, 5e-4);  // 2^-4 + e_v (1 + 2^-4), e_v = 2 e_y + 8 u32
  EXPECT_EQ(q.atol, std::ldexp(1.0, -10));
  EXPECT_LT(q.rtol, 0.125);  // below a truncation's worst error, 2^-3
  const Tolerance h = f.output_tolerance(p, "residual_out");
  EXPECT_EQ(h.rtol + h.atol + h.max_rel_l2, 0.0);
  EXPECT_NEAR(f.output_tolerance(p, "scales").rtol, 4.03e-3, 1e-5);
}

// The GPU rungs refuse what they cannot run, with a reason (registered in the CUDA build only).
TEST(AddRmsnormQuant, GpuRungsRefuseWithAReason) {
  const Family& f = family();
  for (const char* id : {"add_rmsnorm_quant.v01_fused_row", "add_rmsnorm_quant.baseline_unfused"}) {
    const Variant* v = f.find(id);
    if (!v) GTEST_SKIP() << "CPU-only build";
    EXPECT_TRUE(v->can_implement(shape(16, 4096, 128)).ok());
    EXPECT_TRUE(v->can_implement(shape(3, 1000, 0)).ok());
    EXPECT_NE(v->can_implement(shape(3, 100, 0)).reason.find("multiple of 8"), std::string::npos);
    EXPECT_FALSE(v->can_implement(shape(3, 960, 96)).ok());  // 12 lanes: not a power of two
    EXPECT_FALSE(v->can_implement(shape(3, 1024, 512)).ok());
  }
  const Variant* v01 = f.find("add_rmsnorm_quant.v01_fused_row");
  EXPECT_TRUE(v01->can_implement(shape(1, 32768, 0)).ok());
  EXPECT_FALSE(v01->can_implement(shape(1, 40960, 0)).ok());  // more than its registers hold
  EXPECT_TRUE(f.find("add_rmsnorm_quant.baseline_unfused")->can_implement(shape(1, 40960, 0)).ok());
}

namespace {

enum class Fault { none, truncate, scale_off, residual_ulp, zero_nan, per_token_scale };

// A host rung that makes one mistake: v00's arithmetic (fp32), then the fault.
Variant faulty(Fault fault) {
  Variant v = *family().find("add_rmsnorm_quant.v00_cpu");
  v.launch = [fault](const Problem& p, Buffers& b, const LaunchArgs&) {
    const Dims s = add_rmsnorm_quant::dims_of(p);
    const int64_t n = s.hidden;
    const int64_t span = fault == Fault::per_token_scale ? n : s.span();
    std::vector<float> y(static_cast<size_t>(n));
    for (int64_t r = 0; r < s.tokens; ++r) {
      float sum_sq = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double h = b["x"].host_at(r * n + i) + b["residual"].host_at(r * n + i);
        store_from_double(b["residual_out"].data, DType::bf16, r * n + i, h);
        y[i] = static_cast<float>(b["residual_out"].host_at(r * n + i));
        sum_sq += y[i] * y[i];
      }
      if (fault == Fault::residual_ulp && r == s.tokens / 2) {  // one element, one ulp
        const double h = b["residual_out"].host_at(r * n);
        store_from_double(b["residual_out"].data, DType::bf16, r * n, h + std::ldexp(h, -7));
      }
      const float inv = 1.f / std::sqrt(sum_sq / static_cast<float>(n) + 1e-6f);
      for (int64_t i = 0; i < n; ++i) y[i] *= inv * static_cast<float>(b["weight"].host_at(i));
      for (int64_t g = 0; g < n / span; ++g) {
        float amax = 0;
        for (int64_t i = g * span; i < (g + 1) * span; ++i) amax = std::max(amax, std::fabs(y[i]));
        float factor = amax > 0 || fault == Fault::zero_nan ? 448.f / amax : 0.f;
        float scale = amax / 448.f;
        if (fault == Fault::scale_off) {
          scale *= 1.01f;
          factor /= 1.01f;  // q still consistent with the scale: only the scale's check can fail
        }
        for (int64_t gg = g * span / s.span(); gg < (g + 1) * span / s.span(); ++gg)
          static_cast<float*>(b["scales"].data)[r * s.groups() + gg] = scale;
        for (int64_t i = g * span; i < (g + 1) * span; ++i) {
          float v = y[i] * factor;
          if (fault == Fault::truncate) {  // the largest code not above |v|
            uint8_t code = float_to_e4m3_bits(v);
            if (std::fabs(e4m3_bits_to_float(code)) > std::fabs(v)) --code;
            v = e4m3_bits_to_float(code);
          }
          static_cast<uint8_t*>(b["q"].data)[r * n + i] = float_to_e4m3_bits(v);
        }
      }
    }
  };
  return v;
}

Result check(const Variant& v, const Problem& p) {
  RunOptions opt;
  opt.bench = false;
  opt.seed = 7;
  opt.dists = {Dist::normal, Dist::uniform, Dist::heavy};
  return run_variant(family(), v, p, opt);
}

}  // namespace

TEST(AddRmsnormQuant, ChecksCatchWrongRungs) {
  const Problem per_group = shape(17, 1024, 128, /*zero_rows*/ 2);
  const Problem per_token = shape(17, 1024, 0, 2);
  // The faulty rung without a fault passes: the faults alone fail.
  EXPECT_TRUE(check(faulty(Fault::none), per_group).check.passed);
  EXPECT_TRUE(check(faulty(Fault::none), per_token).check.passed);
  for (Fault fault : {Fault::truncate, Fault::scale_off, Fault::residual_ulp, Fault::zero_nan,
                      Fault::per_token_scale}) {
    const Result r = check(faulty(fault), per_group);
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_FALSE(r.check.passed) << static_cast<int>(fault) << ": " << r.check.summary();
  }
  EXPECT_GT(check(faulty(Fault::zero_nan), per_token).check.nan, 0);
  EXPECT_FALSE(check(faulty(Fault::truncate), per_token).check.passed);
}

TEST(AddRmsnormQuant, CpuRungWritesZerosOnZeroRows) {
  const Problem p = shape(5, 256, 128);
  Buffers b = host_buffers(
      p, [](int64_t r, int64_t i) { return r == 2 ? 0.75 : std::sin(static_cast<double>(i)); },
      [](int64_t r, int64_t) { return r == 2 ? -0.75 : 0.5; }, [](int64_t) { return 1.0; });
  const Variant* v = family().find("add_rmsnorm_quant.v00_cpu");
  ASSERT_NE(v, nullptr);
  v->launch(p, b, LaunchArgs{});
  for (int64_t g = 0; g < 2; ++g) EXPECT_EQ(b.host<float>("scales")[2 * 2 + g], 0.f);
  for (int64_t i = 0; i < 256; ++i)
    EXPECT_EQ(e4m3_bits_to_float(b.host<uint8_t>("q")[512 + i]), 0.f);
  const Reference ref = whole(p, b);
  EXPECT_EQ(ref.at("scales").value[4], 0.0);
}

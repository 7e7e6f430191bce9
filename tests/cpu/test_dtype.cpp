#include <gtest/gtest.h>

#include <cmath>

#include "klab/core/dtype.hpp"
#include "klab/core/errors.hpp"
#include "klab/core/rng.hpp"

using namespace klab;

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::f32), 4);
  EXPECT_EQ(dtype_size(DType::bf16), 2);
  EXPECT_EQ(dtype_size(DType::e4m3), 1);
  for (DType t : all_dtypes()) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_THROW(parse_dtype("f33"), UsageError);
}

TEST(DType, HalfKnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);                    // overflow to inf
  EXPECT_EQ(float_to_half_bits(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  // Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1.
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
}

TEST(DType, Fp8KnownValues) {
  EXPECT_EQ(float_to_e4m3_bits(1.0f), 0x38);
  EXPECT_EQ(e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(float_to_e4m3_bits(1000.0f), 0x7e);  // saturates
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7f)));
  EXPECT_EQ(e4m3_bits_to_float(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(float_to_e5m2_bits(1.0f), 0x3c);
  EXPECT_EQ(e5m2_bits_to_float(0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(e5m2_bits_to_float(0x7c)));
}

TEST(DType, EveryNarrowCodeRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    const float e4 = e4m3_bits_to_float(static_cast<uint8_t>(b));
    if (!std::isnan(e4)) {
      EXPECT_EQ(e4m3_bits_to_float(float_to_e4m3_bits(e4)), e4) << b;
    }
    const float e5 = e5m2_bits_to_float(static_cast<uint8_t>(b));
    if (!std::isnan(e5)) {
      EXPECT_EQ(e5m2_bits_to_float(float_to_e5m2_bits(e5)), e5) << b;
    }
  }
  for (int h = 0; h < 65536; ++h) {
    const float f = half_bits_to_float(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(half_bits_to_float(float_to_half_bits(f)), f) << h;
    }
  }
}

TEST(Rng, ReproducibleAndDistinct) {
  std::vector<float> a(1000), b(1000), c(1000);
  fill_random(a.data(), DType::f32, 1000, Dist::normal, 42);
  fill_random(b.data(), DType::f32, 1000, Dist::normal, 42);
  fill_random(c.data(), DType::f32, 1000, Dist::normal, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Rng, DistributionsHaveTheirShape) {
  const int n = 200000;
  std::vector<float> x(n);
  for (Dist d : {Dist::normal, Dist::uniform, Dist::heavy}) {
    fill_random(x.data(), DType::f32, n, d, 7);
    double mean = 0, m2 = 0, mx = 0;
    for (float v : x) {
      mean += v;
      m2 += double(v) * v;
      mx = std::max(mx, double(std::fabs(v)));
    }
    mean /= n;
    m2 /= n;
    EXPECT_NEAR(mean, 0.0, 0.02) << dist_name(d);
    if (d == Dist::normal) {
      EXPECT_NEAR(m2, 1.0, 0.02);
    }
    if (d == Dist::uniform) {
      EXPECT_NEAR(m2, 1.0 / 3, 0.01);
      EXPECT_LE(mx, 1.0);
    }
    if (d == Dist::heavy) {
      EXPECT_GT(mx, 20.0);  // t(3): heavy tails show up in 2e5 draws
    }
    for (float v : x) ASSERT_NE(v, 0.0f);  // never zeros
  }
}

TEST(Rng, PoisonIsDetected) {
  std::vector<uint16_t> x(4);
  fill_poison(x.data(), 8);
  EXPECT_TRUE(is_poison(x.data(), DType::bf16, 2));
  x[2] = 0;
  EXPECT_FALSE(is_poison(x.data(), DType::bf16, 2));
  EXPECT_TRUE(std::isnan(load_as_double(x.data(), DType::bf16, 1)));
}

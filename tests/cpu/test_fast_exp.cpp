// klab/device/fast_exp.hpp's ex2_poly (attention v08's emulated exponential): its relative error
// over the softmax's arguments against long-double exp2, and its zeros below range and at -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "klab/device/fast_exp.hpp"

namespace {

using klab::device::detail::bits_float;
using klab::device::detail::float_bits;
double rel_error(float t) {
  const long double ref = std::exp2(static_cast<long double>(t));
  return static_cast<double>(std::fabs(klab::device::ex2_poly(t) / ref - 1.0L));
}

// ex2.approx.ftz's documented bound is 2 ulp of the result (2^-22 relative near 1): the attention
// family's error model (family.cpp) budgets the exponential at that, so the polynomial must not
// exceed it anywhere a softmax term can land: [-125, 0], and up to 2^8 under a lazy max.
constexpr double kBound = 0x1p-22;

TEST(FastExp, PolyWithinEx2ApproxBoundOverNegativeArguments) {
  // Every 61st float from -0 down to -125 (bit patterns rise with magnitude for negatives):
  // ~17 million arguments, every binade and the rounding boundaries of n = round(t) among them.
  double worst = 0;
  float worst_t = 0;
  for (uint32_t u = float_bits(-0.f); u <= float_bits(klab::device::kEx2PolyMin); u += 61) {
    const float t = bits_float(u);
    const double e = rel_error(t);
    if (e > worst) worst = e, worst_t = t;
  }
  EXPECT_LE(worst, kBound) << "at t = " << worst_t;
  EXPECT_GT(worst, 0.0);  // the polynomial is not exact: the sweep did reach it
}

TEST(FastExp, PolyWithinBoundOverPositiveArgumentsToSixtyFour) {
  double worst = 0;
  for (uint32_t u = float_bits(0.f); u <= float_bits(64.f); u += 61)
    worst = std::fmax(worst, rel_error(bits_float(u)));
  EXPECT_LE(worst, kBound);
}

TEST(FastExp, PolyAtHalfIntegersAndIntegers) {
  // The ends of the polynomial's interval (f = +-1/2) and its middle (f = 0, 2^n exactly).
  for (int n = -124; n <= 8; ++n) {
    for (float t : {float(n), float(n) - 0.5f, float(n) + 0.5f}) {
      if (t < klab::device::kEx2PolyMin) continue;
      EXPECT_LE(rel_error(t), kBound) << "t = " << t;
    }
  }
}

TEST(FastExp, PolyIsZeroBelowRangeAndAtMinusInfinity) {
  EXPECT_EQ(klab::device::ex2_poly(-std::numeric_limits<float>::infinity()), 0.f);
  EXPECT_EQ(klab::device::ex2_poly(-125.5f), 0.f);
  EXPECT_EQ(klab::device::ex2_poly(-1000.f), 0.f);
  EXPECT_EQ(klab::device::ex2_poly(-std::numeric_limits<float>::max()), 0.f);
  EXPECT_GT(klab::device::ex2_poly(klab::device::kEx2PolyMin), 0.f);  // 2^-125: a normal float
  EXPECT_TRUE(std::isnormal(klab::device::ex2_poly(klab::device::kEx2PolyMin)));
}

}  // namespace

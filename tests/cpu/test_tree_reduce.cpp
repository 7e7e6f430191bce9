// klab/device/tree_reduce.hpp (the attention softmax's row max and row sum): the same max as a
// chain at every size, a sum within pairwise summation's bound, the depth it claims, and every
// element taken exactly once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "klab/device/tree_reduce.hpp"

namespace {

using klab::device::tree_depth;
using klab::device::tree_reduce;

template <int N>
void check_size() {
  std::mt19937 rng(N);
  std::normal_distribution<float> dist(0.f, 8.f);
  for (int trial = 0; trial < 200; ++trial) {
    float v[N], w[N];
    float chain_max = -INFINITY;
    long double exact = 0;
    for (int j = 0; j < N; ++j) {
      v[j] = w[j] = dist(rng);
      chain_max = std::fmax(chain_max, v[j]);
    }
    EXPECT_EQ(tree_reduce(v, [](float a, float b) { return std::fmax(a, b); }), chain_max) << N;
    // Terms of a softmax row: exp2 of non-positive arguments, all in (0, 1].
    long double abs_sum = 0;
    for (int j = 0; j < N; ++j) {
      w[j] = std::exp2(-std::fabs(w[j]));
      exact += w[j];
      abs_sum += w[j];
    }
    const float sum = tree_reduce(w, [](float a, float b) { return a + b; });
    // Pairwise summation: each term passes through at most depth roundings of 2^-24 each.
    const long double bound = tree_depth(N) * 0x1p-24L * abs_sum * 1.0001L;
    EXPECT_LE(std::fabs(static_cast<long double>(sum) - exact), bound) << N;
  }
  // Each element counted once: a sum of distinct powers of two is exact and tells who is missing.
  if constexpr (N <= 60) {
    double bits[N];
    for (int j = 0; j < N; ++j) bits[j] = std::ldexp(1.0, j);
    EXPECT_EQ(tree_reduce(bits, [](double a, double b) { return a + b; }), std::ldexp(1.0, N) - 1.0)
        << N;
  }
  // The depth it claims: a reduction that counts levels instead of adding.
  int levels[N] = {};
  const int depth = tree_reduce(levels, [](int a, int b) { return (a > b ? a : b) + 1; });
  EXPECT_EQ(depth, tree_depth(N)) << N;
}

TEST(TreeReduce, MaxExactSumPairwiseAndDepthAtEverySizeTheSoftmaxUses) {
  check_size<1>();
  check_size<2>();
  check_size<3>();
  check_size<7>();
  check_size<16>();  // a row's scores in a 64-key block, one lane
  check_size<32>();  // 128 keys
  check_size<44>();  // 176 keys (v22): not a power of two
  check_size<48>();  // 192 keys
  check_size<64>();  // 256 keys
}

TEST(TreeReduce, DepthIsCeilLog2) {
  EXPECT_EQ(tree_depth(1), 0);
  EXPECT_EQ(tree_depth(2), 1);
  EXPECT_EQ(tree_depth(3), 2);
  EXPECT_EQ(tree_depth(32), 5);
  EXPECT_EQ(tree_depth(33), 6);
  EXPECT_EQ(tree_depth(44), 6);
}

}  // namespace

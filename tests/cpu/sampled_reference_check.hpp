#pragma once
// The check that a family's sampled reference (Family::reference_at, which judges the shapes too
// large for the whole CPU reference) computes the whole reference's bits, for the families whose
// outputs are sampled element by element (add_rmsnorm_quant, qk_norm_rope_cache).
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab::tests {

/// Expects f.reference_at(p, b, ...) at elements 0, stride, 2 stride, ... and the last of each
/// output in `outputs` to equal `whole` (f.reference of p on b) to the bit: the values, and the
/// magnitudes wherever either side reports them (0 where the whole output has none).
inline void expect_sampled_reference_matches_whole(const Family& f, const Problem& p,
                                                   const Buffers& b, const Reference& whole,
                                                   std::initializer_list<const char*> outputs,
                                                   int64_t stride) {
  SCOPED_TRACE(p.str());
  for (const char* out : outputs) {
    const RefOutput& w = whole.at(out);
    const int64_t n = static_cast<int64_t>(w.value.size());
    std::vector<int64_t> index;
    for (int64_t e = 0; e < n; e += stride) index.push_back(e);
    index.push_back(n - 1);
    RefOutput sampled;
    f.reference_at(p, b, out, index, sampled);
    ASSERT_EQ(sampled.value.size(), index.size()) << out;
    const bool mag = !w.magnitude.empty();
    if (mag || !sampled.magnitude.empty()) {
      ASSERT_EQ(sampled.magnitude.size(), index.size()) << out;
    }
    for (size_t k = 0; k < index.size(); ++k) {
      EXPECT_EQ(sampled.value[k], w.value[index[k]]) << out << " " << index[k];
      if (!sampled.magnitude.empty()) {
        EXPECT_EQ(sampled.magnitude[k], mag ? w.magnitude[index[k]] : 0.0)
            << out << " " << index[k];
      }
    }
  }
}

}  // namespace klab::tests

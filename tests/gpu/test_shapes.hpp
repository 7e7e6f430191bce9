#pragma once
// Which awkward shapes a GPU test runs: KLAB_TEST_SHAPES=small keeps those of at most 2 GFLOP and
// 256 MB (compute-sanitizer memcheck, ~100x slower), tiny those of at most 0.1 GFLOP and 16 MB
// (racecheck, which instruments every shared-memory access); otherwise every one.
#include <cstdlib>
#include <string>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab::test {

/// The KLAB_TEST_SHAPES mode ("" when unset).
inline std::string shapes_mode() {
  const char* only = std::getenv("KLAB_TEST_SHAPES");
  return only ? only : "";
}

/// f's awkward shapes within `mode`'s limits ("small", "tiny"; any other mode: all of them).
inline std::vector<Problem> awkward_shapes(const Family& f, const std::string& mode) {
  const double max_flops = mode == "tiny" ? 1e8 : mode == "small" ? 2e9 : 0;
  const double max_bytes = mode == "tiny" ? 1.6e7 : mode == "small" ? 2.56e8 : 0;
  std::vector<Problem> out;
  for (const Problem& p : f.awkward) {
    const Counts c = f.counts(p);
    if (max_bytes > 0 && (c.flops > max_flops || c.bytes > max_bytes)) continue;
    out.push_back(p);
  }
  return out;
}

}  // namespace klab::test

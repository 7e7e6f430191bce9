#pragma once
// Which awkward shapes a GPU test runs, and its cases' names. KLAB_TEST_SHAPES=small keeps the
// shapes of at most 2 GFLOP and 256 MB (compute-sanitizer memcheck, ~100x slower), tiny those of
// at most 0.1 GFLOP and 16 MB (racecheck, which instruments every shared-memory access);
// otherwise every one.
#include <cctype>
#include <cstddef>
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

/// A parameterised case's name: "<what>_<shape>_<dtype>[_mis<N>]_<index>", every character that
/// is not a letter or a digit made '_' (gtest's rule for names).
inline std::string case_name(const std::string& what, const Problem& p, size_t index) {
  std::string s = what + "_" + p.shape.str() + "_" + std::string(dtype_name(p.dtype)) +
                  (p.misalign ? "_mis" + std::to_string(p.misalign) : "");
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s + "_" + std::to_string(index);
}

}  // namespace klab::test

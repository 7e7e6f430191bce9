#pragma once
// Compares a variant's outputs with the fp64 reference.
#include <cstdint>
#include <string>
#include <vector>

#include "klab/harness/buffers.hpp"
#include "klab/harness/family.hpp"

namespace klab {

struct Mismatch {
  std::string tensor;
  int64_t index = 0;
  double got = 0, want = 0;
};

struct CheckResult {
  bool passed = true;
  double max_abs = 0;           ///< max |out - ref|
  double max_rel = 0;           ///< max |out - ref| / |ref| over elements with ref != 0
  double rel_l2 = 0;            ///< ||out - ref||_2 / ||ref||_2 (worst output tensor)
  int64_t nan = 0;              ///< NaN or Inf where the reference is finite
  int64_t unwritten = 0;        ///< elements still holding the poison pattern
  int64_t bad = 0;              ///< elements outside atol + rtol * |ref|
  std::vector<Mismatch> first;  ///< the first few failing elements, with indices
  int64_t compared = 0;         ///< elements compared (a sample, or every element)
  int64_t elements = 0;         ///< elements of the outputs
  /// What the outputs were compared with: "fp64", "fp64 sampled", "vendor <id>" or several of
  /// them, comma-separated (empty: nothing compared yet).
  std::string reference;
  bool plain_fp64() const { return reference.empty() || reference == "fp64"; }
  /// One line: "pass" or why not.
  std::string summary() const;
};

/// Outputs smaller than this are not judged by their relative L2 error (see check.cpp).
inline constexpr int64_t kMinElementsForRelL2 = 64;

/// Compares one output tensor (host copy read back) with its reference.
CheckResult compare_output(const Tensor& out, const RefOutput& ref, const Tolerance& tol,
                           int max_mismatches = 8);
/// Folds b into a (worst of each statistic; passes only if both pass).
void merge(CheckResult& a, const CheckResult& b);

}  // namespace klab

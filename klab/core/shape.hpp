#pragma once
// Named problem dimensions: "m=4096,n=4096,k=4096".
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace klab {

struct Shape {
  std::vector<std::pair<std::string, int64_t>> dims;

  /// Value of a dimension; throws klab::Error if absent (a family bug, not user input).
  int64_t at(std::string_view name) const;
  bool has(std::string_view name) const;
  /// Value of a dimension, or `fallback` when it is absent.
  int64_t get_or(std::string_view name, int64_t fallback) const;
  void set(const std::string& name, int64_t value);
  /// "m=4096,n=4096,k=4096"
  std::string str() const;
  bool operator==(const Shape&) const = default;
};

/// Parses "a=1,b=2". Throws UsageError (one line) on malformed text, duplicate names, negative
/// values or values that overflow int64. Zero is accepted here; validate_problem() rejects it
/// for every dimension a family does not list in Family::zero_ok_dims.
Shape parse_shape(std::string_view text);

/// Multiplies extents, throwing UsageError when the product would overflow int64.
int64_t checked_product(std::initializer_list<int64_t> values, std::string_view what);

}  // namespace klab

#pragma once
// What one run computes: a family's shape, dtype and layout parameters.
#include <cstdint>
#include <string>

#include "klab/core/dtype.hpp"
#include "klab/core/shape.hpp"

namespace klab {

struct Problem {
  std::string family;
  Shape shape;
  DType dtype = DType::f32;
  /// Elements by which every tensor's base pointer is shifted off its 256-byte-aligned
  /// allocation (0 = aligned). Tests misaligned pointers where the API allows them.
  int64_t misalign = 0;
  /// The tensors' layout where a family takes several (e.g. "bnhd" or "bhnd"); empty: the
  /// family's only one.
  std::string layout;

  int64_t dim(std::string_view name) const { return shape.at(name); }
  /// "sgemm m=4096,n=4096,k=4096 f32" (+ " misalign=1", " layout=bhnd" when set)
  std::string str() const;
};

}  // namespace klab

#pragma once
// Every family, registered explicitly (see kernels/register_all.cpp): no static initialisers.
#include <string_view>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab {

class Registry {
 public:
  void add(Family family);
  const std::vector<Family>& families() const { return families_; }
  /// Throws UsageError listing the known families.
  const Family& family(std::string_view name) const;
  /// Finds "family.vNN_name"; throws UsageError when unknown.
  std::pair<const Family*, const Variant*> variant(std::string_view id) const;
  /// Adds a rung to an already registered family, after its last CPU rung (CPU ladders come
  /// first in ladder order). Throws Error when the family is unknown.
  void add_variant(std::string_view family, Variant v);

 private:
  std::vector<Family> families_;
};

/// Builds a problem from CLI text and validates it (dims present and positive, dtype taken by
/// the family, element counts that fit in int64, the family's own rules). Throws UsageError.
Problem make_problem(const Family& f, std::string_view shape_text, std::string_view dtype_text,
                     int64_t misalign = 0, std::string_view layout = {});
/// Validates an already-built problem the same way.
void validate_problem(const Family& f, const Problem& p);
/// UsageError (one line) when p's buffers cannot fit in host memory or in the GPU's memory.
void check_fits_in_memory(const Family& f, const Problem& p);
/// Can this variant run this problem? Checks dtype, then the variant's own can_implement.
Status can_run(const Variant& v, const Problem& p);

}  // namespace klab

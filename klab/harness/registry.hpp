#pragma once
// Every family, registered explicitly (see kernels/register_all.cpp): no static initialisers.
#include <string_view>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/tunable.hpp"

namespace klab {

class Registry {
 public:
  void add(Family family);
  const std::vector<Family>& families() const { return families_; }
  /// Throws UsageError listing the known families.
  const Family& family(std::string_view name) const;
  /// Finds "family.vNN_name"; throws UsageError when unknown.
  std::pair<const Family*, const Variant*> variant(std::string_view id) const;
  /// A tunable rung's configurations (`klab tune`), registered with its family's ladder; an id
  /// registered again replaces the entry.
  void add_tunable(Tunable t);
  /// nullptr when `variant` is not tunable.
  const Tunable* tunable(std::string_view variant) const;
  const std::vector<Tunable>& tunables() const { return tunables_; }

 private:
  std::vector<Family> families_;
  std::vector<Tunable> tunables_;
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

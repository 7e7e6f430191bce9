#pragma once
// Tunable rungs: a variant that runs one of several configurations (tile sizes, ...) and picks
// one per shape class. `klab tune VARIANT` benchmarks every configuration that can run a problem
// and stores the fastest that passes its check, per device name and shape class, in a tune table
// (tune_table.hpp); the rung finds its configuration through tuned_lookup.hpp.
//
// This header says what a tunable is (its configurations, its check, its shape classes, how to
// build a variant fixed to one configuration); the Registry holds them beside the ladders
// (Registry::add_tunable), registered by the same per-family functions.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab {

/// A configuration choice and where it came from.
struct TunedChoice {
  int config = -1;
  std::string source;            ///< "cache", "committed" or "built-in"
  std::string path;              ///< the table file it came from (empty for built-in)
  std::string describe() const;  ///< "cache (~/.cache/klab/tune-NVIDIA_H200.json)", "built-in"
};

struct Tunable {
  std::string variant;               ///< the tunable variant's id, "sgemm.v10_autotuned"
  std::vector<std::string> configs;  ///< configuration names; index = configuration
  /// ok, or why configuration i cannot run the problem (the variant's dtypes are checked apart).
  std::function<Status(int, const Problem&)> can_implement;
  /// The key a table stores winners under ("large", "short_m", ...).
  std::function<std::string(const Problem&)> shape_class;
  /// A variant running configuration i always; its id is config_variant_id(variant, i).
  std::function<Variant(int)> make;
  /// What the variant picks for the problem now, and from which source.
  std::function<TunedChoice(const Problem&)> current;
  /// The committed table, relative to the source directory ("kernels/sgemm/tuned.json").
  std::string committed_table;
};

/// "sgemm.v10_autotuned[cfg3]"
std::string config_variant_id(const std::string& variant, int config);

/// What a Tunable's `make` returns: the tunable rung as registered, fixed to configuration
/// `index` (id config_variant_id, a summary naming the configuration, `launch` as its launcher
/// and can_implement(index, p) as its check).
Variant fixed_config_variant(
    Variant rung, int index, const std::string& config_name,
    std::function<Status(int, const Problem&)> can_implement,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch);

/// ok when `index` names one of the `size` configurations of a tune space; otherwise why not.
Status tune_index_in_range(int index, int size);

}  // namespace klab

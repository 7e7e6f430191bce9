#pragma once
// How a tunable rung finds its configuration. First hit wins:
//   1. the user's cache, tune_cache_path(device): written by every `klab tune` run;
//   2. the committed table in the source tree (e.g. kernels/sgemm/tuned.json), read at run time
//      through klab::build::kSourceDir: written by `klab tune --commit-to`;
//   3. the variant's built-in guess.
// Entries name their configuration by name; one whose name is no longer in the configuration
// list (a renamed or removed entry) is ignored, as is one for another device or variant.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "klab/harness/family.hpp"
#include "klab/harness/tunable.hpp"
#include "klab/harness/tune_table.hpp"

namespace klab {

/// A table to consult, in order, and what to call a hit from it.
struct TuneSource {
  std::string label;  ///< "cache", "committed"
  std::string path;
};
/// The standard order for a device: its cache file, then the committed table.
std::vector<TuneSource> default_tune_sources(const std::string& device,
                                             const std::string& committed_relative);

/// Every choice the sources offer, in lookup order, then the built-in one: the first entry for
/// (device, variant, shape class) in each source whose configuration name is in `configs`.
/// No device name (no GPU): the tables are skipped.
std::vector<TunedChoice> tune_candidates(const std::vector<TuneSource>& sources,
                                         const std::string& device, const std::string& variant,
                                         const std::string& shape_class,
                                         const std::vector<std::string>& configs, int builtin);
/// The first candidate that `usable` accepts (the built-in one when none is).
TunedChoice pick_tuned(const std::vector<TunedChoice>& candidates,
                       const std::function<bool(int)>& usable);

/// The launch-path lookup of a tunable variant: the candidates of each shape class are read once
/// (this device's tune cache, the committed table, the built-in choice) and kept; thread-safe.
class TunedLookup {
 public:
  TunedLookup(std::string variant, std::string committed_table, std::vector<std::string> configs)
      : variant_(std::move(variant)),
        committed_(std::move(committed_table)),
        configs_(std::move(configs)) {}
  /// Candidates for the shape class, in lookup order, ending with `builtin` (the built-in choice
  /// is a function of the class: the first call's is kept). The reference stays valid for the
  /// lookup's lifetime.
  const std::vector<TunedChoice>& candidates(const std::string& shape_class, int builtin);
  /// The first usable candidate's configuration (the built-in one when none is).
  int config(const std::string& shape_class, int builtin, const std::function<bool(int)>& usable);

 private:
  std::string variant_, committed_;
  std::vector<std::string> configs_;
  std::mutex mu_;
  std::map<std::string, std::vector<TunedChoice>> memo_;  // node-based: references stay valid
};

/// `fn` in builds with CUDA, nullptr in CPU-only ones, where a rung's GPU functions are not
/// built: table.tunable(KLAB_IF_CUDA(gpu_v16_...), KLAB_IF_CUDA(launch_...)).
#if KLAB_HAS_CUDA
#define KLAB_IF_CUDA(fn) (fn)
#else
#define KLAB_IF_CUDA(fn) nullptr
#endif

/// Everything a table-driven tunable rung needs besides its kernels, in one place: the lookup
/// (tune cache, committed table, built-in choice per shape class, the first usable one), the
/// rung's choice for a problem, and its Tunable for `klab tune`.
class TableTunable {
 public:
  TableTunable(std::string variant, std::string committed_table, std::vector<std::string> configs,
               std::function<std::string(const Problem&)> shape_class,
               std::function<int(const Problem&)> builtin,
               std::function<Status(int, const Problem&)> can_implement)
      : lookup_(variant, committed_table, configs),
        variant_(std::move(variant)),
        committed_(std::move(committed_table)),
        configs_(std::move(configs)),
        shape_class_(std::move(shape_class)),
        builtin_(std::move(builtin)),
        can_implement_(std::move(can_implement)) {}
  /// The configuration the rung runs for `p`, and where it came from.
  TunedChoice choice(const Problem& p);
  /// choice(p).config, without building the description.
  int config(const Problem& p);
  /// The launcher of one configuration: launch(index, problem, buffers, args).
  using ConfigLauncher = std::function<void(int, const Problem&, Buffers&, const LaunchArgs&)>;
  /// The Tunable to register. Its `make` is `rung()` fixed to a configuration
  /// (fixed_config_variant) that `launch` runs; pass nullptrs where the rung's kernels are not
  /// built (CPU-only builds: KLAB_IF_CUDA below): `klab tune` then says so.
  Tunable tunable(Variant (*rung)(), ConfigLauncher launch);

 private:
  TunedLookup lookup_;
  std::string variant_, committed_;
  std::vector<std::string> configs_;
  std::function<std::string(const Problem&)> shape_class_;
  std::function<int(const Problem&)> builtin_;
  std::function<Status(int, const Problem&)> can_implement_;
};

}  // namespace klab

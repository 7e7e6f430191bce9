#pragma once
// Tunable rungs: a variant that runs one of several configurations (tile sizes, ...) and picks
// one per shape class. `klab tune VARIANT` benchmarks every configuration that can run a problem
// and stores the fastest that passes its check, per device name and shape class, in a tune table.
//
// A tunable variant looks its configuration up, first hit wins:
//   1. the user's cache, tune_cache_path(device): written by every `klab tune` run;
//   2. the committed table in the source tree (e.g. kernels/sgemm/tuned.json), read at run time
//      through klab::build::kSourceDir: written by `klab tune --commit-to`;
//   3. the variant's built-in guess.
// Entries name their configuration by name; one whose name is no longer in the configuration
// list (a renamed or removed entry) is ignored, as is one for another device or variant.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
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

/// Tunables, registered explicitly by the kernel folders (kernels/sgemm/register.cpp) while the
/// registry is built; registering an id again replaces the entry.
void register_tunable(Tunable t);
const Tunable* find_tunable(std::string_view variant);
const std::vector<Tunable>& tunables();

/// One winner: the configuration a variant should run for a shape class on a device.
struct TuneEntry {
  std::string device;       ///< device name, as cudaGetDeviceProperties reports it
  std::string variant;      ///< "sgemm.v10_autotuned"
  std::string shape_class;  ///< "large"
  int config = -1;          ///< index when measured (informative; lookups go by name)
  std::string config_name;
  double median_ms = 0;  ///< its median at `problem`
  std::string problem;   ///< the problem it was measured at
  std::string timestamp, git_sha;
};

struct TuneTable {
  std::vector<TuneEntry> entries;
  const TuneEntry* find(std::string_view device, std::string_view variant,
                        std::string_view shape_class) const;
  /// Adds the entry, replacing one with the same device, variant and shape class.
  void put(const TuneEntry& e);
};

/// $KLAB_CACHE_DIR or ~/.cache/klab (as ceilings_cache_path()).
std::string klab_cache_dir();
/// <cache dir>/tune-<device name, non-alphanumerics as '_'>.json
std::string tune_cache_path(const std::string& device);
/// <source dir>/<relative>: the committed table of a tunable.
std::string committed_table_path(const std::string& relative);

/// A missing file is an empty table; so is a corrupt one when `strict` is false (a lookup must
/// never fail a launch), else it throws UsageError naming the file.
TuneTable load_tune_table(const std::string& path, bool strict = false);
/// Writes the table (creating the directory); throws UsageError when it cannot.
void save_tune_table(const TuneTable& t, const std::string& path);
/// load + put + save.
void record_tune_entry(const TuneEntry& e, const std::string& path);

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

/// ok when `index` names one of the `size` configurations of a tune space; otherwise why not.
Status tune_index_in_range(int index, int size);

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

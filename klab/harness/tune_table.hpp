#pragma once
// Tune tables: the JSON files that hold `klab tune`'s winners (one entry per device, variant and
// shape class) — the user's cache, tune_cache_path(device), and the committed tables in the
// source tree (kernels/<family>/tuned.json) — and where they live.
#include <string>
#include <string_view>
#include <vector>

namespace klab {

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

}  // namespace klab

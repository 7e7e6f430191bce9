#include "klab/harness/tunable.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "klab/build_info.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab {

using nlohmann::json;

std::string TunedChoice::describe() const {
  return path.empty() ? source : source + " (" + path + ")";
}

std::string config_variant_id(const std::string& variant, int config) {
  return variant + "[cfg" + std::to_string(config) + "]";
}

Variant fixed_config_variant(
    Variant rung, int index, const std::string& config_name,
    std::function<Status(int, const Problem&)> can_implement,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  const std::string id = rung.info.id;  // "sgemm.v10_autotuned": the rung is "v10"
  const size_t dot = id.find('.');
  const std::string rung_name = id.substr(dot + 1, id.find('_', dot) - dot - 1);
  rung.info.id = config_variant_id(id, index);
  rung.info.summary =
      rung_name + " fixed to configuration " + std::to_string(index) + ": " + config_name;
  rung.launch = std::move(launch);
  rung.can_implement = [index, can = std::move(can_implement)](const Problem& p) {
    return can(index, p);
  };
  return rung;
}

namespace {
std::vector<Tunable>& tunable_list() {
  static std::vector<Tunable> list;
  return list;
}
}  // namespace

void register_tunable(Tunable t) {
  auto& list = tunable_list();
  for (auto& existing : list)
    if (existing.variant == t.variant) {
      existing = std::move(t);
      return;
    }
  list.push_back(std::move(t));
}

const Tunable* find_tunable(std::string_view variant) {
  for (const auto& t : tunable_list())
    if (t.variant == variant) return &t;
  return nullptr;
}

const std::vector<Tunable>& tunables() { return tunable_list(); }

const TuneEntry* TuneTable::find(std::string_view device, std::string_view variant,
                                 std::string_view shape_class) const {
  for (const auto& e : entries)
    if (e.device == device && e.variant == variant && e.shape_class == shape_class) return &e;
  return nullptr;
}

void TuneTable::put(const TuneEntry& e) {
  for (auto& old : entries)
    if (old.device == e.device && old.variant == e.variant && old.shape_class == e.shape_class) {
      old = e;
      return;
    }
  entries.push_back(e);
}

std::string klab_cache_dir() {
  std::filesystem::path dir;
  if (const char* c = std::getenv("KLAB_CACHE_DIR"); c && *c)
    dir = c;
  else if (const char* h = std::getenv("HOME"))
    dir = std::filesystem::path(h) / ".cache" / "klab";
  else
    dir = "/tmp/klab-cache";
  return dir.string();
}

std::string tune_cache_path(const std::string& device) {
  std::string key = device.empty() ? "no_device" : device;
  for (char& ch : key)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return (std::filesystem::path(klab_cache_dir()) / ("tune-" + key + ".json")).string();
}

std::string committed_table_path(const std::string& relative) {
  // $KLAB_SOURCE_DIR, else the source tree this binary was built from, else the working
  // directory (a build carried to another machine runs from a checkout at another path).
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("KLAB_SOURCE_DIR"); env && *env)
    return (fs::path(env) / relative).string();
  const fs::path built = fs::path(build::kSourceDir) / relative;
  std::error_code ec;
  if (fs::exists(built, ec) || !fs::exists(fs::path(relative), ec)) return built.string();
  return fs::absolute(fs::path(relative), ec).string();
}

namespace {

json entry_json(const TuneEntry& e) {
  return {{"device", e.device},   {"variant", e.variant},         {"shape_class", e.shape_class},
          {"config", e.config},   {"config_name", e.config_name}, {"median_ms", e.median_ms},
          {"problem", e.problem}, {"timestamp", e.timestamp},     {"git_sha", e.git_sha}};
}

TuneEntry entry_from(const json& j) {
  TuneEntry e;
  e.device = j.at("device").get<std::string>();
  e.variant = j.at("variant").get<std::string>();
  e.shape_class = j.at("shape_class").get<std::string>();
  e.config_name = j.at("config_name").get<std::string>();
  e.config = j.value("config", -1);
  e.median_ms = j.value("median_ms", 0.0);
  e.problem = j.value("problem", "");
  e.timestamp = j.value("timestamp", "");
  e.git_sha = j.value("git_sha", "");
  return e;
}

}  // namespace

TuneTable load_tune_table(const std::string& path, bool strict) {
  TuneTable t;
  std::ifstream in(path);
  if (!in) return t;
  try {
    const json j = json::parse(in);
    for (const auto& e : j.at("entries")) t.entries.push_back(entry_from(e));
  } catch (const std::exception& e) {
    if (strict) throw UsageError(path + " is not a klab tune table: " + std::string(e.what()));
    return {};
  }
  return t;
}

void save_tune_table(const TuneTable& t, const std::string& path) {
  const std::filesystem::path p = path;
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  json entries = json::array();
  for (const auto& e : t.entries) entries.push_back(entry_json(e));
  const json j = {
      {"what", "klab tune winners: the configuration per device, variant and shape class"},
      {"entries", entries}};
  // Written whole to a temporary file, then renamed: a reader never sees half a table.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw UsageError("cannot write " + path);
    out << j.dump(2) << "\n";
    if (!out) throw UsageError("cannot write " + path);
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) throw UsageError("cannot write " + path + ": " + ec.message());
}

void record_tune_entry(const TuneEntry& e, const std::string& path) {
  TuneTable t = load_tune_table(path, true);
  t.put(e);
  save_tune_table(t, path);
}

std::vector<TuneSource> default_tune_sources(const std::string& device,
                                             const std::string& committed_relative) {
  std::vector<TuneSource> s{{"cache", tune_cache_path(device)}};
  if (!committed_relative.empty())
    s.push_back({"committed", committed_table_path(committed_relative)});
  return s;
}

std::vector<TunedChoice> tune_candidates(const std::vector<TuneSource>& sources,
                                         const std::string& device, const std::string& variant,
                                         const std::string& shape_class,
                                         const std::vector<std::string>& configs, int builtin) {
  std::vector<TunedChoice> out;
  if (!device.empty()) {
    for (const auto& s : sources) {
      const TuneTable t = load_tune_table(s.path);
      const TuneEntry* e = t.find(device, variant, shape_class);
      if (!e) continue;
      const auto it = std::find(configs.begin(), configs.end(), e->config_name);
      if (it == configs.end()) continue;  // stale: no configuration of that name any more
      out.push_back({static_cast<int>(it - configs.begin()), s.label, s.path});
    }
  }
  out.push_back({builtin, "built-in", ""});
  return out;
}

TunedChoice pick_tuned(const std::vector<TunedChoice>& candidates,
                       const std::function<bool(int)>& usable) {
  KLAB_CHECK(!candidates.empty(), "tune_candidates always ends with the built-in choice");
  for (const auto& c : candidates)
    if (!usable || usable(c.config)) return c;
  return candidates.back();
}

const std::vector<TunedChoice>& TunedLookup::candidates(const std::string& shape_class,
                                                        int builtin) {
  std::lock_guard lock(mu_);
  auto it = memo_.find(shape_class);
  if (it == memo_.end()) {
    const DeviceInfo& d = device_info();
    const std::string device = d.present ? d.name : "";
    it = memo_
             .emplace(shape_class, tune_candidates(default_tune_sources(device, committed_), device,
                                                   variant_, shape_class, configs_, builtin))
             .first;
  }
  return it->second;
}

int TunedLookup::config(const std::string& shape_class, int builtin,
                        const std::function<bool(int)>& usable) {
  return pick_tuned(candidates(shape_class, builtin), usable).config;
}

TunedChoice TableTunable::choice(const Problem& p) {
  return pick_tuned(lookup_.candidates(shape_class_(p), builtin_(p)),
                    [&](int i) { return can_implement_(i, p).ok(); });
}

int TableTunable::config(const Problem& p) {
  return lookup_.config(shape_class_(p), builtin_(p),
                        [&](int i) { return can_implement_(i, p).ok(); });
}

Tunable TableTunable::tunable(Variant (*rung)(), ConfigLauncher launch) {
  Tunable t;
  t.variant = variant_;
  t.configs = configs_;
  t.can_implement = can_implement_;
  t.shape_class = shape_class_;
  t.current = [this](const Problem& p) { return choice(p); };
  t.committed_table = committed_;
  const int n = static_cast<int>(configs_.size());
  t.make = [rung, launch = std::move(launch), variant = variant_, names = configs_,
            can = can_implement_, n](int index) -> Variant {
    KLAB_CHECK(index >= 0 && index < n, variant + ": tune-space index out of range");
    if (!rung || !launch) throw UsageError(variant + " needs a CUDA build");
    return fixed_config_variant(rung(), index, names[static_cast<size_t>(index)], can,
                                [index, launch](const Problem& p, Buffers& b, const LaunchArgs& a) {
                                  launch(index, p, b, a);
                                });
  };
  return t;
}

Status tune_index_in_range(int index, int size) {
  if (index >= 0 && index < size) return Status::yes();
  return Status::no("tune-space index " + std::to_string(index) + " out of range [0, " +
                    std::to_string(size) + ")");
}

}  // namespace klab

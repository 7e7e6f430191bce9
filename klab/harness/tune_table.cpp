#include "klab/harness/tune_table.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "klab/build_info.hpp"
#include "klab/core/errors.hpp"

namespace klab {

using nlohmann::json;

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

}  // namespace klab

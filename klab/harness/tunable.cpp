#include "klab/harness/tunable.hpp"

namespace klab {

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

Status tune_index_in_range(int index, int size) {
  if (index >= 0 && index < size) return Status::yes();
  return Status::no("tune-space index " + std::to_string(index) + " out of range [0, " +
                    std::to_string(size) + ")");
}

}  // namespace klab

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

Status tune_index_in_range(int index, int size) {
  if (index >= 0 && index < size) return Status::yes();
  return Status::no("tune-space index " + std::to_string(index) + " out of range [0, " +
                    std::to_string(size) + ")");
}

}  // namespace klab

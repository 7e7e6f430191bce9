#include "klab/harness/tuned_lookup.hpp"

#include <algorithm>

#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab {

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

}  // namespace klab

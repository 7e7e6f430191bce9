#include "klab/harness/ceilings.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/devices.hpp"
#include "klab/harness/result.hpp"
#include "klab/harness/roofline.hpp"

namespace klab {

using nlohmann::json;

const Ceiling* Ceilings::find(std::string_view name) const {
  for (const auto& c : items)
    if (c.name == name) return &c;
  return nullptr;
}

#if KLAB_HAS_CUDA
void register_bandwidth_probes(std::vector<CeilingProbe>& probes);  // bandwidth_probes.cu
void register_compute_probes(std::vector<CeilingProbe>& probes);    // compute_probes.cu
#endif

std::vector<CeilingProbe>& ceiling_probes() {
  static std::vector<CeilingProbe> probes = [] {
    std::vector<CeilingProbe> p;
#if KLAB_HAS_CUDA
    register_bandwidth_probes(p);
    register_compute_probes(p);
#endif
    return p;
  }();
  return probes;
}

double datasheet_bandwidth_gbps(const std::string& name) {
  // The device table's DRAM bandwidth (vendor datasheets; devices.cpp names each source).
  const DeviceSpec* d = device_for_cuda_name(name);
  return d ? d->memory_gbps : 0;
}

std::string ceilings_cache_path() {
  std::filesystem::path dir;
  if (const char* c = std::getenv("KLAB_CACHE_DIR"))
    dir = c;
  else if (const char* h = std::getenv("HOME"))
    dir = std::filesystem::path(h) / ".cache" / "klab";
  else
    dir = "/tmp/klab-cache";
  const DeviceInfo& d = device_info();
  std::string key = d.name + "-" + d.pci_bus_id;
  for (char& ch : key)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return (dir / ("ceilings-" + key + ".json")).string();
}

namespace {
json to_json(const Ceilings& c) {
  json items = json::array();
  for (const auto& i : c.items)
    items.push_back({{"name", i.name},
                     {"unit", i.unit},
                     {"value", i.value},
                     {"datasheet", i.datasheet},
                     {"how", i.how}});
  return {{"device", c.device},
          {"timestamp", c.timestamp},
          {"ceilings", items},
          {"machine", machine_json()}};
}
}  // namespace

std::optional<Ceilings> load_cached_ceilings() {
  std::ifstream in(ceilings_cache_path());
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    Ceilings c;
    c.device = j.at("device");
    c.timestamp = j.value("timestamp", "");
    for (const auto& i : j.at("ceilings"))
      c.items.push_back({i.at("name"), i.at("unit"), i.at("value"), i.value("datasheet", 0.0),
                         i.value("how", "")});
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // a corrupt cache is re-measured
  }
}

void save_ceilings(const Ceilings& c) {
  const std::filesystem::path p = ceilings_cache_path();
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p);
  out << to_json(c).dump(2) << "\n";
}

Ceilings measure_ceilings(const BenchConfig& cfg) {
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError("klab ceilings needs a GPU: " + d.absent_reason);
  Ceilings c;
  c.device = d.name + " " + d.pci_bus_id;
  c.timestamp = now_iso8601();
  for (const auto& probe : ceiling_probes()) offer(c, probe(cfg));
  return c;
}

void offer(Ceilings& c, const Ceiling& x) {
  for (auto& have : c.items)
    if (have.name == x.name) {
      if (x.value > have.value) {
        const double datasheet = have.datasheet;
        have = x;
        if (have.datasheet <= 0) have.datasheet = datasheet;
      }
      return;
    }
  c.items.push_back(x);
}

std::string ceiling_unit(std::string_view name) {
  for (std::string_view bw :
       {"copy", "read", "write", "read2_write1", "read3_write1", "read4_write1"})
    if (name == bw) return "GB/s";
  return "TFLOP/s";
}

const Ceilings& ceilings_for_this_device() {
  static const Ceilings c = [] {
    if (auto cached = load_cached_ceilings()) return *cached;
    BenchConfig cfg;
    Ceilings m = measure_ceilings(cfg);
    save_ceilings(m);
    return m;
  }();
  return c;
}

}  // namespace klab

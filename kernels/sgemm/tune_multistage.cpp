// The host side of v16's tune space: names, the lookup and the tunable registration.
#include "kernels/sgemm/tune_multistage.hpp"

#include "kernels/sgemm/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::sgemm {

std::string MultistageTuneConfig::name() const {
  return std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(block_k) +
         "_w" + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "_t" +
         std::to_string(thread_m) + "x" + std::to_string(thread_n) + "_s" + std::to_string(stages) +
         "_b" + std::to_string(min_blocks);
}

std::vector<std::string> multistage_config_names() {
  std::vector<std::string> names;
  for (const MultistageTuneConfig& c : kMultistageSpace) names.push_back(c.name());
  return names;
}

Status multistage_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kMultistageSpaceSize); !s.ok()) return s;
  const MultistageTuneConfig& c = kMultistageSpace[index];
  // The launch runs v09's kernel (kTuneSpace[0]) where the 16-byte path is not possible: its grid
  // must fit too.
  for (const int bm : {c.block_m, kTuneSpace[0].block_m})
    if ((p.dim("m") + bm - 1) / bm > 65535)
      return Status::no("m > 65535 * " + std::to_string(bm) + " (gridDim.y limit)");
  const DeviceInfo& d = device_info();
  if (d.present && d.smem_per_block_optin > 0 && c.smem_bytes() > d.smem_per_block_optin)
    return Status::no(c.name() + " needs " + std::to_string(c.smem_bytes() / 1024) +
                      " KiB of shared memory per block; this device allows " +
                      std::to_string(d.smem_per_block_optin / 1024));
  return Status::yes();
}

namespace {

TableTunable& table() {
  static TableTunable t(
      kV16Id, kCommittedTable, multistage_config_names(), shape_class_key,
      [](const Problem&) { return 0; },  // v15's configuration, every shape class
      multistage_config_can_implement);
  return t;
}

}  // namespace

TunedChoice v16_tuned_choice(const Problem& p) { return table().choice(p); }

int v16_tuned_config(const Problem& p) { return table().config(p); }

void register_v16_tunable(Registry& r) {
  r.add_tunable(table().tunable(KLAB_IF_CUDA(gpu_v16_autotuned_multistage),
                                KLAB_IF_CUDA(launch_multistage_config)));
}

namespace {

/// can_implement of a tune space whose entry `index` runs kMultistageSpace[entries[index].entry]
/// (v17, v18): the index range, then that entry's rules.
template <class Entry, size_t N>
Status entry_space_can_implement(const Entry (&entries)[N], int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, static_cast<int>(N)); !s.ok()) return s;
  return multistage_config_can_implement(entries[index].entry, p);
}

/// The table of a rung tuned over such a space; built-in: its entry 0 for every shape class.
TableTunable entry_space_table(const char* id, std::vector<std::string> names,
                               Status (*can_implement)(int, const Problem&)) {
  return TableTunable(
      id, kCommittedTable, std::move(names), shape_class_key, [](const Problem&) { return 0; },
      can_implement);
}

}  // namespace

std::vector<std::string> spread_config_names() {
  std::vector<std::string> names;
  for (const SpreadEntry& e : kSpreadEntries)
    names.push_back(kMultistageSpace[e.entry].name() +
                    (e.from > 0 ? "_c" + std::to_string(e.from) : ""));
  return names;
}

Status spread_config_can_implement(int index, const Problem& p) {
  return entry_space_can_implement(kSpreadEntries, index, p);
}

namespace {

TableTunable& spread_table() {  // entry 0: v16's committed shape
  static TableTunable t =
      entry_space_table(kV17Id, spread_config_names(), spread_config_can_implement);
  return t;
}

}  // namespace

int v17_tuned_config(const Problem& p) { return spread_table().config(p); }

void register_v17_tunable(Registry& r) {
  r.add_tunable(spread_table().tunable(KLAB_IF_CUDA(gpu_v17_spread_copies),
                                       KLAB_IF_CUDA(launch_spread_config)));
}

std::vector<std::string> tma_config_names() {
  std::vector<std::string> names;
  for (const TmaEntry& e : kTmaEntries) {
    std::string n = kMultistageSpace[e.entry].name();
    names.push_back(n.substr(0, n.rfind("_s")) + "_r" + std::to_string(e.stages) +
                    (e.probe >= 0 ? "_p" + std::to_string(e.probe) : ""));
  }
  return names;
}

Status tma_config_can_implement(int index, const Problem& p) {
  return entry_space_can_implement(kTmaEntries, index, p);
}

namespace {

TableTunable& tma_table() {  // entry 0: v16's committed shape
  static TableTunable t = entry_space_table(kV18Id, tma_config_names(), tma_config_can_implement);
  return t;
}

}  // namespace

int v18_tuned_config(const Problem& p) { return tma_table().config(p); }

void register_v18_tunable(Registry& r) {
  r.add_tunable(
      tma_table().tunable(KLAB_IF_CUDA(gpu_v18_tma_producer), KLAB_IF_CUDA(launch_tma_config)));
}

}  // namespace klab::sgemm

// The host side of v07's tune space: names, shape classes, the lookup (tune cache, committed
// table, built-in guess) and its registration as a tunable for `klab tune`.
#include "kernels/hgemm/tune.hpp"

#include <climits>

#include "kernels/hgemm/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::hgemm {

std::string HgemmConfig::name() const {
  return std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(block_k) +
         "_w" + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "_s" +
         std::to_string(stages) + "_b" + std::to_string(min_blocks) + "_g" +
         std::to_string(group_m);
}

std::vector<std::string> hgemm_config_names() {
  std::vector<std::string> names;
  for (const HgemmConfig& c : kTuneSpace) names.push_back(c.name());
  return names;
}

const char* shape_class_name(ShapeClass c) {
  switch (c) {
    case ShapeClass::large:
      return "large";
    case ShapeClass::small:
      return "small";
  }
  return "?";
}

ShapeClass shape_class(const Problem& p) {
  return p.dim("m") * p.dim("n") >= int64_t(2048) * 2048 ? ShapeClass::large : ShapeClass::small;
}

namespace {

// v07's built-in table, one entry per ShapeClass (in enum order): the guesses used when neither
// the tune cache nor the committed table has an entry for the device. Measured winners belong in
// the committed table (`klab tune --commit`), not here. Large: v05, the best measured rung.
// Small: v06's 128x128 tiles, two blocks per SM: twice v05's tiles for grids under a wave.
constexpr int kBuiltinTable[] = {
    0,  // large: 128x256x64, warp 64x64, 4 stages, 1 block/SM, group 8 (v05)
    7,  // small: 128x128x64, warp 64x64, 3 stages, 2 blocks/SM, group 8 (v06)
};

// v07's launch-path lookup, read once per shape class.
TableTunable& table() {
  static TableTunable t(
      kV07Id, kCommittedTable, hgemm_config_names(),
      [](const Problem& p) { return std::string(shape_class_name(shape_class(p))); },
      [](const Problem& p) { return builtin_config(shape_class(p)); }, hgemm_config_can_implement);
  return t;
}

}  // namespace

int builtin_config(ShapeClass c) { return kBuiltinTable[static_cast<int>(c)]; }

TunedChoice tuned_choice(const Problem& p) { return table().choice(p); }

int tuned_config(const Problem& p) { return table().config(p); }

Status hgemm_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kTuneSpaceSize); !s.ok()) return s;
  const HgemmConfig& c = kTuneSpace[index];
  const int64_t bm = c.block_m, bn = c.block_n;
  if (((p.dim("m") + bm - 1) / bm) * ((p.dim("n") + bn - 1) / bn) > INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  // On a device with less than 227 KiB per block (A100: 163 KiB) the deep entries cannot launch.
  const DeviceInfo& d = device_info();
  if (d.present && d.smem_per_block_optin > 0 && c.smem_bytes() > d.smem_per_block_optin)
    return Status::no(c.name() + " needs " + std::to_string(c.smem_bytes() / 1024) +
                      " KiB of shared memory per block; this device allows " +
                      std::to_string(d.smem_per_block_optin / 1024));
  return Status::yes();
}

void register_hgemm_tunable(Registry& r) {
  // v07 with the table lookup replaced by one fixed configuration.
  r.add_tunable(
      table().tunable(KLAB_IF_CUDA(gpu_v07_mma_autotuned), KLAB_IF_CUDA(launch_hgemm_config)));
}

std::vector<std::string> v09_config_names() {
  std::vector<std::string> names;
  for (const TmaProducerEntry& e : kV09Entries)
    names.push_back("128x256x64_s" + std::to_string(e.stages) + "_g" + std::to_string(e.group_m) +
                    (e.probe >= 0 ? "_p" + std::to_string(e.probe) : ""));
  return names;
}

Status v09_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kV09SpaceSize); !s.ok()) return s;
  // Every entry and its fallback (v05's kernel) use 128x256 tiles on a 1-D grid.
  if (((p.dim("m") + 127) / 128) * ((p.dim("n") + 255) / 256) > INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  return Status::yes();
}

namespace {

TableTunable& v09_table() {
  static TableTunable t(
      kV09Id, kCommittedTable, v09_config_names(),
      [](const Problem& p) { return std::string(shape_class_name(shape_class(p))); },
      [](const Problem&) { return 0; }, v09_config_can_implement);
  return t;
}

}  // namespace

int v09_tuned_config(const Problem& p) { return v09_table().config(p); }

void register_v09_tunable(Registry& r) {
  r.add_tunable(
      v09_table().tunable(KLAB_IF_CUDA(gpu_v09_mma_tma_producer), KLAB_IF_CUDA(launch_v09_config)));
}

}  // namespace klab::hgemm

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
  if (index < 0 || index >= kMultistageSpaceSize)
    return Status::no("tune-space index " + std::to_string(index) + " out of range [0, " +
                      std::to_string(kMultistageSpaceSize) + ")");
  const MultistageTuneConfig& c = kMultistageSpace[index];
  if ((p.dim("m") + c.block_m - 1) / c.block_m > 65535)
    return Status::no("m > 65535 * " + std::to_string(c.block_m) + " (gridDim.y limit)");
  const DeviceInfo& d = device_info();
  if (d.present && d.smem_per_block_optin > 0 && c.smem_bytes() > d.smem_per_block_optin)
    return Status::no(c.name() + " needs " + std::to_string(c.smem_bytes() / 1024) +
                      " KiB of shared memory per block; this device allows " +
                      std::to_string(d.smem_per_block_optin / 1024));
  return Status::yes();
}

namespace {

constexpr int kBuiltin = 0;  // v15's configuration, every shape class

TunedLookup& lookup() {
  static TunedLookup l(kV16Id, kCommittedTable, multistage_config_names());
  return l;
}

bool usable(int index, const Problem& p) { return multistage_config_can_implement(index, p).ok(); }

}  // namespace

TunedChoice v16_tuned_choice(const Problem& p) {
  return pick_tuned(lookup().candidates(shape_class_name(shape_class(p)), kBuiltin),
                    [&](int i) { return usable(i, p); });
}

int v16_tuned_config(const Problem& p) {
  return lookup().config(shape_class_name(shape_class(p)), kBuiltin,
                         [&](int i) { return usable(i, p); });
}

void register_v16_tunable() {
  Tunable t;
  t.variant = kV16Id;
  t.configs = multistage_config_names();
  t.can_implement = multistage_config_can_implement;
  t.shape_class = [](const Problem& p) { return std::string(shape_class_name(shape_class(p))); };
  t.current = v16_tuned_choice;
  t.committed_table = kCommittedTable;
  t.make = [](int index) -> Variant {
    KLAB_CHECK(index >= 0 && index < kMultistageSpaceSize,
               "sgemm v16 tune-space index out of range");
#if KLAB_HAS_CUDA
    return fixed_config_variant(gpu_v16_autotuned_multistage(), index,
                                kMultistageSpace[index].name(), multistage_config_can_implement,
                                [index](const Problem& p, Buffers& b, const LaunchArgs& a) {
                                  launch_multistage_config(index, p, b, a);
                                });
#else
    throw UsageError(std::string(kV16Id) + " needs a CUDA build");
#endif
  };
  register_tunable(std::move(t));
}

}  // namespace klab::sgemm

// The host side of v07's tune space: names, the per-dtype lookup and the tunable registration.
#include "kernels/transpose/tune_occupancy.hpp"

#include "kernels/transpose/family.hpp"
#include "kernels/transpose/tune.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/tuned_lookup.hpp"

namespace klab::transpose {

std::string WideConfig::name() const {
  return std::to_string(rows) + "x" + std::to_string(cols) + "_t" + std::to_string(threads) + "_b" +
         std::to_string(min_blocks) + (streaming ? "_cs" : "") +
         (group > 0 ? "_g" + std::to_string(group) : "");
}

std::vector<std::string> wide_config_names() {
  std::vector<std::string> names;
  for (const WideConfig& c : kWideSpace) names.push_back(c.name());
  return names;
}

namespace {

// Built-in guesses per dtype: cuBLAS's 64x64 recipe in f32; 256-byte input rows in bf16.
int builtin_config(const Problem& p) { return p.dtype == DType::f32 ? 0 : 7; }

std::string shape_class(const Problem& p) { return std::string(dtype_name(p.dtype)); }

TableTunable& table() {
  static TableTunable t(kV07Id, kTransposeTable, wide_config_names(), shape_class, builtin_config,
                        wide_config_can_implement);
  return t;
}

}  // namespace

Status wide_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kWideSpaceSize); !s.ok()) return s;
  const WideConfig& c = kWideSpace[index];
  if (!c.fits(static_cast<int>(dtype_size(p.dtype))))
    return Status::no(
        c.name() + " does not fit " + std::string(dtype_name(p.dtype)) +
        " (tile sides must be whole 128-byte segments, min_blocks tiles in an SM's shared memory)");
  return Status::yes();
}

int wide_tuned_config(const Problem& p) { return table().config(p); }

void register_v07_tunable(Registry& r) {
  r.add_tunable(
      table().tunable(KLAB_IF_CUDA(gpu_v07_high_occupancy), KLAB_IF_CUDA(launch_wide_config)));
}

}  // namespace klab::transpose

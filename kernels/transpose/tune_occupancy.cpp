// The host side of v07's tune space: names, the per-dtype lookup and the tunable registration.
#include "kernels/transpose/tune_occupancy.hpp"

#include "kernels/transpose/family.hpp"
#include "kernels/transpose/tune.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/tunable.hpp"

namespace klab::transpose {

std::string WideConfig::name() const {
  return std::to_string(rows) + "x" + std::to_string(cols) + "_t" + std::to_string(threads) + "_b" +
         std::to_string(min_blocks) + (streaming ? "_cs" : "");
}

std::vector<std::string> wide_config_names() {
  std::vector<std::string> names;
  for (const WideConfig& c : kWideSpace) names.push_back(c.name());
  return names;
}

namespace {

// Built-in guesses per dtype: cuBLAS's 64x64 recipe in f32; 256-byte input rows in bf16.
int builtin_config(DType t) { return t == DType::f32 ? 0 : 7; }

std::string shape_class(const Problem& p) { return std::string(dtype_name(p.dtype)); }

TunedLookup& lookup() {
  static TunedLookup l(kV07Id, kTransposeTable, wide_config_names());
  return l;
}

TunedChoice tuned_choice(const Problem& p) {
  return pick_tuned(lookup().candidates(shape_class(p), builtin_config(p.dtype)),
                    [&](int i) { return wide_config_can_implement(i, p).ok(); });
}

}  // namespace

Status wide_config_can_implement(int index, const Problem& p) {
  if (index < 0 || index >= kWideSpaceSize)
    return Status::no("tune-space index " + std::to_string(index) + " out of range [0, " +
                      std::to_string(kWideSpaceSize) + ")");
  const WideConfig& c = kWideSpace[index];
  if (!c.fits(static_cast<int>(dtype_size(p.dtype))))
    return Status::no(c.name() + " does not fit " + std::string(dtype_name(p.dtype)) +
                      " (tile sides must be whole 128-byte segments, shared memory <= 48 KiB)");
  return Status::yes();
}

int wide_tuned_config(const Problem& p) {
  return lookup().config(shape_class(p), builtin_config(p.dtype),
                         [&](int i) { return wide_config_can_implement(i, p).ok(); });
}

void register_v07_tunable() {
  Tunable t;
  t.variant = kV07Id;
  t.configs = wide_config_names();
  t.can_implement = wide_config_can_implement;
  t.shape_class = shape_class;
  t.current = tuned_choice;
  t.committed_table = kTransposeTable;
  t.make = [](int index) -> Variant {
    KLAB_CHECK(index >= 0 && index < kWideSpaceSize, "transpose v07 tune-space index out of range");
#if KLAB_HAS_CUDA
    return fixed_config_variant(gpu_v07_high_occupancy(), index, kWideSpace[index].name(),
                                wide_config_can_implement,
                                [index](const Problem& p, Buffers& b, const LaunchArgs& a) {
                                  launch_wide_config(index, p, b, a);
                                });
#else
    throw UsageError(std::string(kV07Id) + " needs a CUDA build");
#endif
  };
  register_tunable(std::move(t));
}

}  // namespace klab::transpose

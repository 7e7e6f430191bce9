// The host side of v06's tune space: names, limits, the per-dtype lookup and the registration
// as a tunable for `klab tune`.
#include "kernels/transpose/tune.hpp"

#include "kernels/transpose/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/tuned_lookup.hpp"

namespace klab::transpose {

std::string TmaConfig::name() const {
  return std::to_string(sub_x) + "x" + std::to_string(sub_y) + "_s" + std::to_string(stages) +
         (group == 8 ? "" : "_g" + std::to_string(group)) + (direct_store ? "_st" : "") +
         (cp_async_load ? "_ld" : "");
}

std::vector<std::string> tma_config_names() {
  std::vector<std::string> names;
  for (const TmaConfig& c : kTmaSpace) names.push_back(c.name());
  return names;
}

namespace {

// The built-in guesses, per dtype, used until a tune table has an entry for the device.
int builtin_config(const Problem& p) { return p.dtype == DType::f32 ? 0 : 1; }

std::string shape_class(const Problem& p) { return std::string(dtype_name(p.dtype)); }

TableTunable& table() {
  static TableTunable t(kV06Id, kTransposeTable, tma_config_names(), shape_class, builtin_config,
                        tma_config_can_implement);
  return t;
}

}  // namespace

Status tma_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kTmaSpaceSize); !s.ok()) return s;
  const TmaConfig& c = kTmaSpace[index];
  const int elem = static_cast<int>(dtype_size(p.dtype));
  switch (c.misfit(elem)) {
    case TmaConfig::Misfit::shared_memory:
      return Status::no(c.name() + " needs " + std::to_string(c.smem_bytes(elem) / 1024) +
                        " KiB of shared memory in " + std::string(dtype_name(p.dtype)) +
                        " (at most 227)");
    case TmaConfig::Misfit::box_side:
      return Status::no(c.name() + ": a TMA box side is at most 256 elements");
    case TmaConfig::Misfit::threads:
      return Status::no(c.name() + ": more than 1024 threads");
    case TmaConfig::Misfit::none:
      break;
  }
  return Status::yes();
}

int tma_tuned_config(const Problem& p) { return table().config(p); }

void register_transpose_tunable(Registry& r) {
#if KLAB_HAS_CUDA
  r.add_tunable(table().tunable(gpu_v06_tma_pipeline,
                                [](int index, const Problem& p, Buffers& b, const LaunchArgs& a) {
                                  if (tma_path_ok(p, b)) return launch_tma_config(index, p, b, a);
                                  launch_vectorized(p, b, a);
                                }));
#else
  r.add_tunable(table().tunable(nullptr, nullptr));
#endif
}

}  // namespace klab::transpose

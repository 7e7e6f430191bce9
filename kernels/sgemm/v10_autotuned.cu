// v10 autotuned: v09's kernel template instantiated for every configuration in tune.hpp's
// kTuneSpace; each launch picks one by shape class (large, medium, small, short m, short n), so
// small and skinny problems get tiles that fill the 132 SMs instead of leaving most of them idle
// under 128 x 128 tiles. The choice comes from the first of: the tune cache for this device
// (~/.cache/klab/tune-<device>.json, written by `klab tune`), the committed table
// kernels/sgemm/tuned.json (`klab tune --commit-to`), the built-in guess in tune.cpp.
// `launch_sgemm_config` runs any entry by index, for the `klab tune` sweep.
// Adds over v09: shape-dependent tiles (more blocks for small m * n, shorter tiles for thin C).
// Expected bottleneck: as v09 on large shapes (the same kernel unless the sweep finds better);
// on small ones, too few blocks or too little k to amortise the prologue.
// Requirements: as v09 (16-byte paths when k % 4 == 0, n % 4 == 0 and aligned; scalar otherwise).
#include <array>

#include "kernels/sgemm/warptile.cuh"

namespace klab::sgemm {

namespace {

using Launcher = void (*)(const GemmArgs&, cudaStream_t);

template <size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  return {&launch_warptile<static_cast<int>(I)>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kTuneSpaceSize>());

}  // namespace

void launch_sgemm_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kTuneSpaceSize, "sgemm tune-space index out of range");
  kLaunchers[static_cast<size_t>(index)](gemm_args(p, b), stream_of(args));
}

Variant gpu_v10_autotuned() {
  return gpu_variant(
      "v10_autotuned",
      "v09's template, tiles per shape class: tune cache, else kernels/sgemm/tuned.json, else "
      "built-in",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch_sgemm_config(tuned_config(p), p, b, args);
      },
      [](const Problem& p) { return sgemm_config_can_implement(tuned_config(p), p); });
}

}  // namespace klab::sgemm

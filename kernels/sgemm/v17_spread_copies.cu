// v17 spread copies: v16's kernel with its k-tile refill issued one slice per k-step, between
// the FFMAs, instead of in one burst after the barrier; stage indices rotate instead of being
// computed modulo the stage count. Tuned over v16's two best shapes with 3 and 4 stages
// (tune_multistage.hpp, kSpreadEntries; `klab tune sgemm.v17_spread_copies`).
// Why: v16's winner (128x256x8, 3 stages) issues 78% of cycles against cuBLAS's 89% with the
// same 8 warps per SM, and Nsight Compute puts the difference in `wait` (0.15 cycles per issue;
// cuBLAS ~0) and `dispatch_stall` (0.21; cuBLAS 0.10). Its SASS (the control codes' stall
// counts, decoded from cuobjdump) shows where: after each barrier both warps of a scheduler run
// the same ~100-instruction stretch with no FFMA in it, the refill (6 LDGSTS with their address
// and predicate arithmetic, a branch on the interior test, two stage indices computed modulo 3
// by multiply-shift chains) with stall counts of 2-13 cycles each. The barrier keeps the two
// warps in step, so neither fills the other's bubbles: ~100-150 cycles per 2048 FFMA issue
// cycles of the scheduler per k-tile.
// Expected (the prediction, written before it ran): the refill's instructions hide between
// FFMAs (1 LDGSTS per k-step), `wait` and `dispatch_stall` fall to cuBLAS's level, issue active
// 78% -> 83-86%: 47.5-49 TFLOP/s at 4096^3, 94-97% of cuBLAS. The 4-stage entries matter if the
// later-issued last slice (7 k-steps later than in v16) leaves too little lead time at 3 stages.
// Requirements: as v16.
#include <array>
#include <utility>

#include "kernels/sgemm/multistage.cuh"
#include "kernels/sgemm/tune_multistage.hpp"

namespace klab::sgemm {

namespace {

using Launcher = void (*)(const GemmArgs&, cudaStream_t);

template <size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  return {&launch_multistage<MultistageEntry<kSpreadEntries[I].entry, kSpreadEntries[I].from>>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kSpreadSpaceSize>());

}  // namespace

void launch_spread_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kSpreadSpaceSize, "sgemm v17 tune-space index out of range");
  const GemmArgs g = gemm_args(p, b);
  if (!vec4_ok(g)) return launch_warptile<0>(g, stream_of(args));  // v09, scalar loads
  kLaunchers[static_cast<size_t>(index)](g, stream_of(args));
}

Variant gpu_v17_spread_copies() {
  Variant v = gpu_variant(
      "v17_spread_copies",
      "v16 with each k-tile's refill spread over its k-steps and rotating stage indices; "
      "configuration per shape class from " +
          std::to_string(kSpreadSpaceSize) + " entries",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch_spread_config(v17_tuned_config(p), p, b, args);
      },
      [](const Problem& p) { return spread_config_can_implement(v17_tuned_config(p), p); });
  v.info.min_sm = 80;  // cp.async
  return v;
}

}  // namespace klab::sgemm

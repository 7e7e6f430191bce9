// v17 spread copies: v16's kernel with its k-tile refill issued in slices between the FFMAs of
// k-steps `from` .. BK-2, instead of in one burst after the barrier; the copies are predicated
// (no branch around them and no compiler barrier: cp_async_4_if / cp_async_16_if), their
// validity a mask computed once per k-tile, and the stage indices rotate instead of being
// computed modulo the stage count. Tuned over v16's committed shape with 3 and 4 stages and the
// refill's first k-step (tune_multistage.hpp, kSpreadEntries; `klab tune sgemm.v17_spread_copies`).
// Why: v16's winner (128x256x8, 3 stages) keeps fewer issue slots busy than cuBLAS with the
// same 8 warps per SM, and Nsight Compute puts the difference in `wait` and `dispatch_stall`. Its
// SASS (the control codes' stall counts, decoded from cuobjdump) shows where: after each barrier
// both warps of a scheduler run the same ~100-instruction stretch with no FFMA in it, the refill
// (6 LDGSTS with their address and predicate arithmetic, a branch on the interior test, two stage
// indices computed modulo 3 by multiply-shift chains) with stall counts of 2-13 cycles each. The
// barrier keeps the two warps in step, so neither fills the other's bubbles: ~100-150 cycles per
// 2048 FFMA issue cycles of the scheduler per k-tile.
// Expected (the prediction, written before it ran): the refill's instructions hide between
// FFMAs, `wait` and `dispatch_stall` fall to cuBLAS's level: 47.5-49 TFLOP/s at 4096^3, 94-97%
// of cuBLAS.
// Measured: refuted, slower than v16 in every schedule tried:
// - copies over k-steps 0-6 with a branch per step and cp.async's compiler barrier (the fragment
//   loads could no longer move across the copies: `short_scoreboard`);
// - predicated, no compiler barrier, k-steps 0-6;
// - the refill in k-steps 4-6 or in 6 only, where cuBLAS's SASS puts its copies, the mask
//   computed arithmetically (committed: 4-6 with 4 stages). The loop's static stall counts fell
//   as intended (below v16's, near cuBLAS's), but the predicated schedules raise
//   `dispatch_stall` by more than they save (no register bank conflicts by `klab sass`'s
//   estimate in v16 or this schedule);
// - the copies' source offsets kept in registers and the stage offsets rotated by adds (no IMAD
//   in the loop, as in cuBLAS's): no better, reverted
//   (2026-11-30_2e54a3b_sgemm_v17_register_offsets).
// The numbers, the runs and the details: docs/worklogs/gemm.md.
// Requirements: as v16.
#include <array>
#include <utility>

#include "kernels/sgemm/multistage.cuh"
#include "kernels/sgemm/tune_multistage.hpp"

namespace klab::sgemm {

namespace {

template <size_t... I>
constexpr std::array<MultistageLauncher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  return {&launch_multistage<MultistageEntry<kSpreadEntries[I].entry, kSpreadEntries[I].from>>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kSpreadSpaceSize>());

}  // namespace

void launch_spread_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  launch_table_entry(kLaunchers, index, p, b, args);
}

Variant gpu_v17_spread_copies() {
  return tuned_multistage_variant(
      "v17_spread_copies",
      "v16 with each k-tile's refill spread over its k-steps and rotating stage indices; "
      "configuration per shape class from " +
          std::to_string(kSpreadSpaceSize) + " entries",
      v17_tuned_config, launch_spread_config, spread_config_can_implement);
}

}  // namespace klab::sgemm

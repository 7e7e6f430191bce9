// v17 spread copies: v16's kernel with its k-tile refill issued in slices between the FFMAs of
// k-steps `from` .. BK-2, instead of in one burst after the barrier; the copies are predicated
// (no branch around them and no compiler barrier: cp_async_4_if / cp_async_16_if), their
// validity a mask computed once per k-tile, and the stage indices rotate instead of being
// computed modulo the stage count. Tuned over v16's committed shape with 3 and 4 stages and the
// refill's first k-step (tune_multistage.hpp, kSpreadEntries; `klab tune sgemm.v17_spread_copies`).
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
// FFMAs, `wait` and `dispatch_stall` fall to cuBLAS's level, issue active 78% -> 83-86%:
// 47.5-49 TFLOP/s at 4096^3, 94-97% of cuBLAS.
// Measured (session 5), refuted three times, v16 45.65-46.39 in the same calls:
// - copies over k-steps 0-6 with a branch per step and cp.async's compiler barrier: 39.75
//   TFLOP/s (2026-11-30_4f43b01_sgemm_v17_first_sweeps/tune_sgemm_v17.txt; the fragment loads could no longer move across the
//   copies: `short_scoreboard` 0.28);
// - predicated, no compiler barrier, k-steps 0-6: 43.1-43.3 (2026-11-30_0473170_sgemm_v17_predicated/tune_sgemm_v17.txt; main
//   run results/h200/2026-11-30_4f99922_transpose_gemm_tables/run_gemm.json: 43.27, 84.9% of cuBLAS; `dispatch_stall` 0.31);
// - the refill in k-steps 4-6 or in 6 only, where cuBLAS's SASS puts its copies, the mask
//   computed arithmetically: 44.35-44.38 and 42.85-42.86 (2026-11-30_42d9e48_sgemm_v17_refill/tune_sgemm_v17.txt);
//   committed 4-6 with 4 stages, 44.27 beside cuBLAS's 50.76 (2026-11-30_42d9e48_sgemm_v17_refill/run_sgemm_v17.json, 87.2%; v16
//   90.0%), `dispatch_stall` 0.34. The loop's static stall counts fell as intended (1208-1218
//   cycles per iteration against v16's 1316; cuBLAS 1161), but the predicated schedules raise
//   `dispatch_stall` by more than they save (no register bank conflicts by `klab sass`'s
//   estimate in v16 or this schedule). Keeping the copies' source offsets in registers and
//   rotating the stage offsets by adds (no IMAD in the loop, as in cuBLAS's) was no better:
//   43.97 (2026-11-30_2e54a3b_sgemm_v17_register_offsets/tune_sgemm_v17.txt; reverted). The worklog (docs/worklogs/gemm.md) has
//   the details.
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

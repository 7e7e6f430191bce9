// v16 autotuned multistage: v15's kernel (hoisted copies, A transposed by 4-byte cp.async,
// fragments double-buffered) instantiated for every entry of tune_multistage.hpp's space, picked
// per shape class as v10 picks v09's: tune cache, committed table kernels/sgemm/tuned.json,
// built-in (v15's configuration). `klab tune sgemm.v16_autotuned_multistage` measures them all.
// Changes over v15: none in the kernel; the tile shape, BK, stage count and warp layout become
// a measured choice among the entries of tune_multistage.hpp. The one to watch is cuBLAS's own shape (its profile:
// sm80_xmma_gemm ... tilesize256x128x8_stage3_warpsize4x2x1, 254 registers, 1 block/SM): 256x128
// blocks of 8 warps of 64x64, each lane 8x16 accumulators, so a k-step reads 24 floats of shared
// memory per 128 FFMA instead of v15's 16 per 64 (-25% shared traffic per flop). v14 tried that
// shape without v15's hoisting and lost (38.1 TFLOP/s) to its per-k-tile copy arithmetic.
// Expected (the prediction, written before it ran): the 256x128 entries beat v15's 44.5 TFLOP/s
// by 3-8% (46-48, 90-94% of cuBLAS), the 128x128 variations stay within 2% of v15. 95% of cuBLAS
// would also need cuBLAS's issue efficiency (88.9% issue active, FMA pipe 78.5%; v09: 73.9/63.7).
// Measured (session 4): the first sweep (results/h200/2026-11-30_8d2d5de_sgemm_v16_hgemm_v08/tune_sgemm_v16.txt) put cuBLAS's shape,
// 256x128x8 with 3 stages, first at 45.4 TFLOP/s (+2% over v15; at BK 16: 43.0); the 128x128
// variations tie v15 (44.2-44.5). The second (2026-11-30_e1de696_sgemm_v16_tuned/tune_sgemm_v16.txt) found 128x256x8 and 16x8
// lanes 0.6% faster (45.7); committed: 128x256x8. Beside cuBLAS (2026-11-30_e1de696_sgemm_v16_tuned/run_sgemm_v16.json): 45.7
// TFLOP/s, 90% of its 50.75. The low end of the prediction: the main loop is 90.5% FFMA by
// `klab sass` (cuBLAS ~88%), but issue active stays at 78% against cuBLAS's 89% (Nsight Compute),
// with `dispatch_stall` twice cuBLAS's: the gap is now the instruction schedule (register banks,
// reuse caches) that CUDA C++ does not control.
// Requirements: as v15 (16-byte path when k % 4 == 0, n % 4 == 0 and aligned; v09's scalar kernel
// otherwise); up to 83 KiB of dynamic shared memory per block.
#include <array>
#include <utility>

#include "kernels/sgemm/multistage.cuh"
#include "kernels/sgemm/tune_multistage.hpp"

namespace klab::sgemm {

namespace {

template <size_t... I>
constexpr std::array<MultistageLauncher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  return {&launch_multistage<MultistageEntry<static_cast<int>(I), /*not spread*/ -1>>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kMultistageSpaceSize>());

}  // namespace

void launch_multistage_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  launch_table_entry(kLaunchers, index, p, b, args);
}

Variant gpu_v16_autotuned_multistage() {
  return tuned_multistage_variant(
      "v16_autotuned_multistage",
      "v15's kernel, configuration per shape class from " + std::to_string(kMultistageSpaceSize) +
          " entries: tune cache, else kernels/sgemm/tuned.json, else v15's",
      v16_tuned_config, launch_multistage_config, multistage_config_can_implement);
}

}  // namespace klab::sgemm

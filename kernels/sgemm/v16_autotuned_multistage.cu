// v16 autotuned multistage: v15's kernel (hoisted copies, A transposed by 4-byte cp.async,
// fragments double-buffered) instantiated for every entry of tune_multistage.hpp's space, picked
// per shape class as v10 picks v09's: tune cache, committed table kernels/sgemm/tuned.json,
// built-in (v15's configuration). `klab tune sgemm.v16_autotuned_multistage` measures them all.
// Changes over v15: none in the kernel; the tile shape, BK, stage count and warp layout become
// a measured choice among the entries of tune_multistage.hpp. The one to watch is cuBLAS's own
// shape (its profile: sm80_xmma_gemm ... tilesize256x128x8_stage3_warpsize4x2x1, 254 registers,
// 1 block/SM): 256x128 blocks of 8 warps of 64x64, each lane 8x16 accumulators, so a k-step
// reads 24 floats of shared memory per 128 FFMA instead of v15's 16 per 64 (-25% shared traffic
// per flop). v14 tried that shape without v15's hoisting and lost to its per-k-tile copy
// arithmetic.
// Expected (the prediction, written before it ran): the 256x128 entries beat v15 by 3-8%
// (90-94% of cuBLAS), the 128x128 variations stay within 2% of v15. 95% of cuBLAS would also need
// cuBLAS's issue efficiency.
// Measured: the sweeps put cuBLAS's shape first, then 128x256x8 with 16x8 lanes a little faster
// (committed); beside cuBLAS, the low end of the prediction. The main loop is FFMA-denser than
// cuBLAS's by `klab sass`, but fewer issue slots are active (Nsight Compute), with more
// `dispatch_stall`: the gap is now the instruction schedule (register banks, reuse caches) that
// CUDA C++ does not control. The numbers and the runs: docs/worklogs/gemm.md.
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

// v18 tma_producer (sm_90a): v16's k loop with the copies taken out of the math warps. A producer
// warpgroup fills a ring of stages (B by one TMA box per k-tile, A transposed by the producers'
// 4-byte cp.async) and signals full/empty mbarriers; the eight consumer warps only load
// fragments and FFMA (tma_producer_sm90.cuh). hgemm v09's structure, which moved mma.sync closer
// to cuBLASLt (docs/worklogs/gemm.md).
// Why: v16's loop (1164 instructions per k-tile, 1024 FFMA) also carries each thread's share of
// the copies (2 LDGSTS.128 + 4 LDGSTS.32 per k-tile with their addresses and predicates) and a
// __syncthreads per k-tile at which the SM's only block drains; it keeps fewer issue slots busy
// than cuBLAS (Nsight Compute), the difference mostly `dispatch_stall` and barrier drains. Here
// the consumers' loop is FFMAs, 6 LDS.128 per k-step and one wait and one arrive per k-tile; the
// producer warp of each SM sub-partition issues ~12 instructions per k-tile.
// Prediction (written before it ran): issue active 78% -> 85-88%, 48-51 TFLOP/s at 4096^3
// (95-100% of cuBLAS); entry 0 (v16's 128x256x8 with a 4-deep ring) or the BK 16 entry first.
// Risks (as written before it ran; built: 232 registers per consumer): the consumers'
// 224-register budget (v16 uses up to 255 at 256 threads), and three warps per sub-partition
// (one producer) instead of two.
// Measured: the sweeps put BK 16 first (BK 8 no better than v16) with a 6-stage ring; beside
// cuBLAS it lands inside the prediction, with no barrier stalls left and `dispatch_stall` the
// largest difference from cuBLAS. Probing the next stage's barrier at a middle k-step
// (mbarrier_test_wait), so that the last k-step's wait branches on a known predicate, gains more
// at BK 8 than at BK 16; committed: BK 16, 6 stages, probe at k-step 12. The shared-pipeline tidy
// (klab/device/pipeline_sm90.cuh) shortened the loop by ~20 instructions. The numbers and the
// runs: docs/worklogs/gemm.md.
// Requirements: sm_90a (setmaxnreg, TMA); the 16-byte path (k % 4 == 0, n % 4 == 0, aligned
// pointers: TMA needs 16-byte row pitches), v09's scalar kernel otherwise.
#include <array>
#include <utility>

#include "kernels/sgemm/tma_producer_sm90.cuh"
#include "kernels/sgemm/tune_multistage.hpp"

namespace klab::sgemm {

namespace {

/// Entry kIndex of kTmaEntries as a TmaProducerConfig.
template <int kIndex>
using TmaEntryConfig = TmaProducerConfig<kMultistageSpace[kTmaEntries[kIndex].entry].block_m,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].block_n,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].block_k,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].warp_m,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].warp_n,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].thread_m,
                                         kMultistageSpace[kTmaEntries[kIndex].entry].thread_n,
                                         kTmaEntries[kIndex].stages, kTmaEntries[kIndex].probe>;

template <size_t... I>
constexpr std::array<MultistageLauncher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  static_assert(((TmaEntryConfig<static_cast<int>(I)>::kSmemBytes <= 227 * 1024) && ...));
  return {&launch_tma_producer<TmaEntryConfig<static_cast<int>(I)>>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kTmaSpaceSize>());

}  // namespace

void launch_tma_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  launch_table_entry(kLaunchers, index, p, b, args);
}

Variant gpu_v18_tma_producer() {
  Variant v = tuned_multistage_variant(
      "v18_tma_producer",
      "v16's warp tiles fed by a producer warpgroup (TMA for B, transposing cp.async for A) "
      "through full/empty mbarriers; configuration per shape class from " +
          std::to_string(kTmaSpaceSize) + " entries",
      v18_tuned_config, launch_tma_config, tma_config_can_implement);
  v.info.min_sm = 90;
  return v;
}

}  // namespace klab::sgemm

// v09 mma_tma_producer (sm_90a): v05's warp tiles, fed by a warp-specialised TMA pipeline
// (tma_producer_sm90.cuh). One thread of a producer warpgroup issues TMA boxes into a 4-stage ring of 48 KiB
// stages with full/empty mbarriers; eight consumer warps (64x64 each, 128x256 block, 1 block/SM)
// ldmatrix and mma.sync only.
// Why: v05 keeps the tensor pipe far from saturated (Nsight Compute). Its consumers also issue
// the copies (12 LDGSTS per thread per k-tile, with their address arithmetic and predicates:
// ~15% of the loop's non-HMMA issue slots) and all eight warps meet at a __syncthreads after
// every k-tile, where the SM's only block drains together (a `wait` + barrier bubble each 4 mma
// steps). Here a consumer's only synchronisation is its own wait on the next stage's full
// barrier, which is normally already complete (3 stages ahead), and one arrive per stage; the
// warps drift apart instead of meeting.
// Prediction (written before it ran): tensor pipe 73.5% -> 77-80% busy, 455-475 TFLOP/s at
// 4096^3 (61-64% of cuBLASLt), the same gain at 8192^3. Risk (as predicted, for a first design of
// 288 threads; built: 384, 40 registers per producer and 232 per consumer): a thread may hold
// at most 224 registers (v05 uses 254, of which the copier's addresses are ~20): spills would
// cost more than the gain; and consumer warps drifting apart may lose the L2/L1 sharing of
// v05's lockstep.
// Measured: above the prediction in every run (the prediction was too low), the tensor pipe much
// busier than v05's, the main loop 212 instructions per k-tile (`klab sass`; v05 309) and few
// `barrier` stalls; the top stalls are now the HMMA issue itself (`wait`,
// `math_pipe_throttle`).
// Tuned (after those measurements): tune.hpp's kV09Entries add sgemm v18's early probe of the
// next stage's full barrier (mbarrier_test_wait at an earlier mma step, so that the last step's
// wait branches on a known predicate; `long_scoreboard` is v09's third stall) and a
// rasterisation group of 16; entry 0 is the configuration measured first. `klab tune
// hgemm.v09_mma_tma_producer` measures them: all four within noise of one another (the probe is
// not shown to help here). Committed: entry 3 (group 16, probe at step 2). The numbers and the
// runs: docs/worklogs/gemm.md.
// Requirements: sm_90 (TMA, mbarrier transaction counts), 193 KiB of dynamic shared memory; the
// TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte aligned pointers (16-byte row pitches);
// other problems run v05's kernel with element copies.
#include <array>
#include <utility>

#include "kernels/hgemm/tma_producer_sm90.cuh"
#include "kernels/hgemm/tune.hpp"

namespace klab::hgemm {

namespace {

template <int kIndex>
using V09Config = TmaProducerConfig</*block*/ 128, 256, kV09Entries[kIndex].stages,
                                    kV09Entries[kIndex].group_m, kV09Entries[kIndex].probe>;
using Fallback =
    MultistageConfig</*block*/ 128, 256, 64, /*warp*/ 64, 64, /*stages*/ 4, /*blocks/SM*/ 1>;

using Launcher = void (*)(const Problem&, Buffers&, const LaunchArgs&);

template <size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launch_table(std::index_sequence<I...>) {
  return {&launch_tma_producer_or_fallback<V09Config<static_cast<int>(I)>, Fallback>...};
}

constexpr auto kLaunchers = launch_table(std::make_index_sequence<kV09SpaceSize>());

}  // namespace

void launch_v09_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kV09SpaceSize, "hgemm v09 tune-space index out of range");
  kLaunchers[static_cast<size_t>(index)](p, b, args);
}

Variant gpu_v09_mma_tma_producer() {
  Variant v = gpu_variant(
      "v09_mma_tma_producer",
      "v05's 128x256 block of 8 mma.sync warps fed by a TMA producer warpgroup through an "
      "mbarrier ring; configuration per shape class from " +
          std::to_string(kV09SpaceSize) + " entries",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        launch_v09_config(v09_tuned_config(p), p, b, args);
      });
  v.info.min_sm = 90;
  v.can_implement = [](const Problem& p) {
    return v09_config_can_implement(v09_tuned_config(p), p);
  };
  return v;
}

}  // namespace klab::hgemm

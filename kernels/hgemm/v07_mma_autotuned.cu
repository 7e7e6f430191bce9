// v07 mma_autotuned: v05's kernel (multistage_sm80.cuh) instantiated for every configuration in
// tune.hpp's kTuneSpace; each launch picks one by shape class ("large": m * n >= 2048^2, "small"
// otherwise) from the first of: this device's tune cache (~/.cache/klab/tune-<device>.json,
// written by `klab tune hgemm.v07_mma_autotuned`), the committed table kernels/hgemm/tuned.json
// (`klab tune --commit`: the measured winner for "large"), the built-in guess in tune.cpp (large:
// entry 0, v05's 128x256x64 s4; small: entry 7, v06's 128x128x64 s3 at 2 blocks/SM).
// `launch_hgemm_config` runs any entry by index, for the `klab tune` sweep.
// Changes over v05: none in the kernel. What v05 chose by reasoning becomes a measured choice
// among 8 entries, each a question v05's and v06's headers left open:
// - 256x128 blocks (cuBLASLt's shape at 4096^3): the same HMMA : LDSM ratio and L2 -> SM bytes
//   per flop, but a wave of 132 tiles reads 2048 A rows and ~2100 B columns instead of 1024 and
//   all 4096 (fewer distinct bytes per wave for L2 to hold);
// - 3 stages instead of 4 (is the 4th needed at one block per SM?), and BK = 32 with 6 or 8
//   stages (twice the barriers per flop of v05, but finer-grained refills in flight);
// - rasterization groups of 4 and 16 tile rows instead of 8 (the L2 footprint of a wave);
// - v06's 2 blocks/SM of 128x128 (measured below v05 at 4096^3; kept for small grids).
// Nothing here can lift the limit v05's profile shows (math_pipe_throttle and wait stalls: the
// mma.sync issue rate), so the gains can only come from the edges: L2
// locality, barrier frequency, the pipeline's depth.
// Expected (the prediction, written before it ran): at 4096^3 bf16 the sweep finds a few % over
// v05, ~455-470 TFLOP/s (most likely 256x128 or group 16); without a tune table entry v07 is v05
// to within noise (entry 0 is v05's configuration, the same kernel).
// Measured: the sweep's winner at 4096^3 (group 16, committed in tuned.json) ties v05; at 8192^3
// v07 is ahead of v05. The numbers and the runs: docs/worklogs/gemm.md.
// Requirements: sm_80+ and the chosen entry's dynamic shared memory (96 to 192 KiB; entries above
// the device's per-block limit are refused: on A100, 163 KiB, only entries 2, 3 and 7 run).
// Any m, n, k as v04/v05 (cp.async path when k % 8 == 0, n % 8 == 0 and the pointers are
// 16-byte aligned, element copies otherwise).
#include <array>
#include <utility>

#include "kernels/hgemm/multistage_sm80.cuh"
#include "kernels/hgemm/tune.hpp"

namespace klab::hgemm {

namespace {

/// Entry kIndex of tune.hpp's space as the kernel template's configuration.
template <int kIndex>
struct Entry {
  static constexpr HgemmConfig kC = kTuneSpace[kIndex];
  using Cfg = MultistageConfig<kC.block_m, kC.block_n, kC.block_k, kC.warp_m, kC.warp_n, kC.stages,
                               kC.min_blocks, kC.group_m>;
  static_assert(Cfg::kThreads == kC.threads(), "tune.hpp's threads() and the template agree");
  static_assert(Cfg::template kSmemBytes<__nv_bfloat16> == kC.smem_bytes() &&
                    Cfg::template kSmemBytes<__half> == kC.smem_bytes(),
                "tune.hpp's smem_bytes() and the template agree");
};

template <class T, int kIndex>
void launch_entry(const GemmArgs<T>& g, cudaStream_t stream) {
  using Cfg = typename Entry<kIndex>::Cfg;
  if (g.vec16())
    launch_multistage<Cfg, T, true>(g, stream);
  else
    launch_multistage<Cfg, T, false>(g, stream);
}

template <class T>
using Launcher = void (*)(const GemmArgs<T>&, cudaStream_t);

template <class T, size_t... I>
constexpr std::array<Launcher<T>, sizeof...(I)> launchers(std::index_sequence<I...>) {
  return {&launch_entry<T, static_cast<int>(I)>...};
}

}  // namespace

void launch_hgemm_config(int index, const Problem& p, Buffers& b, const LaunchArgs& args) {
  KLAB_CHECK(index >= 0 && index < kTuneSpaceSize, "hgemm tune-space index out of range");
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    static constexpr auto table = launchers<T>(std::make_index_sequence<kTuneSpaceSize>());
    table[static_cast<size_t>(index)](g, stream_of(args));
  });
}

Variant gpu_v07_mma_autotuned() {
  Variant v = gpu_variant("v07_mma_autotuned",
                          "v05's kernel, configuration per shape class from " +
                              std::to_string(kTuneSpaceSize) +
                              " entries: tune cache, else kernels/hgemm/tuned.json, else built-in",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            launch_hgemm_config(tuned_config(p), p, b, args);
                          });
  v.can_implement = [](const Problem& p) { return hgemm_config_can_implement(tuned_config(p), p); };
  return v;
}

}  // namespace klab::hgemm

// The sgemm ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/cpu/ladder.hpp"
#include "kernels/register.hpp"
#include "kernels/sgemm/family.hpp"
#include "kernels/sgemm/tune.hpp"
#include "kernels/sgemm/tune_multistage.hpp"

namespace klab {

void register_sgemm(Registry& r) {
  using namespace sgemm;
  Family f = make_sgemm();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_naive(),
    gpu_v02_coalesced(),
    gpu_v03_smem_tiles(),
    gpu_v04_1d_blocktile(),
    gpu_v05_2d_blocktile(),
    gpu_v06_vectorized(),
    gpu_v07_bank_conflict_free(),
    gpu_v08_double_buffer(),
    gpu_v09_warptile(),
    gpu_v10_autotuned(),
    gpu_v11_multistage(),
    gpu_v12_multistage_256x128(),
    gpu_v13_multistage_at(),
    gpu_v14_multistage_at_256x128(),
    gpu_v15_hoisted_copies(),
    gpu_v16_autotuned_multistage(),
    gpu_v17_spread_copies(),
    gpu_v18_tma_producer(),
    gpu_baseline_cublas(),
#endif
  };
  const std::vector<Variant> cpu_rungs = cpu::ladder(f.name);  // after v00, before the GPU rungs
  f.ladder.insert(f.ladder.begin() + 1, cpu_rungs.begin(), cpu_rungs.end());
  r.add(std::move(f));
  register_sgemm_tunable(r);  // v10, v16, v17 and v18: `klab tune` (registered without CUDA too)
  register_v16_tunable(r);
  register_v17_tunable(r);
  register_v18_tunable(r);
}

}  // namespace klab

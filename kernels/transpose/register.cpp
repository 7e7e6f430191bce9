// The transpose ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/register.hpp"
#include "kernels/transpose/family.hpp"
#include "kernels/transpose/tune.hpp"
#include "kernels/transpose/tune_occupancy.hpp"

namespace klab {

void register_transpose(Registry& r) {
  using namespace transpose;
  Family f = make_transpose();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_naive(),
    gpu_v02_smem_tile(),
    gpu_v03_padded(),
    gpu_v04_swizzled(),
    gpu_v05_vectorized(),
    gpu_v06_tma_pipeline(),
    gpu_v07_high_occupancy(),
    gpu_baseline_cublas(),
#endif
  };
  r.add(std::move(f));
  register_transpose_tunable(r);  // v06 and v07: `klab tune` (registered without CUDA too)
  register_v07_tunable(r);
}

}  // namespace klab

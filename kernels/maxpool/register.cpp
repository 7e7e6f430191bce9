// The maxpool ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/maxpool/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_maxpool(Registry& r) {
  using namespace maxpool;
  Family f = make_maxpool();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_naive(),
    gpu_v02_vertical_strip(),
    gpu_v03_vector_rows(),
#if KLAB_HAS_CUDNN
    gpu_baseline_cudnn(),
#endif
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

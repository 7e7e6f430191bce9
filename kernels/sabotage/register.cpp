// The sabotage ladder: a correct rung, then one planted fault per rung (see each file's header).
#include "kernels/register.hpp"
#include "kernels/sabotage/family.hpp"

namespace klab {

void register_sabotage(Registry& r) {
  using namespace sabotage;
  Family f = make_sabotage();
  f.ladder = {
#if KLAB_HAS_CUDA
    gpu_v00_correct(),
    gpu_v01_smem_race(),
    gpu_v02_misaligned_vector(),
    gpu_v03_silent_nan(),
    gpu_v04_slow_uncoalesced(),
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

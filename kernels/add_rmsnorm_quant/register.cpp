// The add_rmsnorm_quant ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/add_rmsnorm_quant/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_add_rmsnorm_quant(Registry& r) {
  using namespace add_rmsnorm_quant;
  Family f = make_add_rmsnorm_quant();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_fused_row(),
    gpu_baseline_unfused(),  // the unfused sequence of klab launches: the fused rungs' baseline
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

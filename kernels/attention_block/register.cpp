// The attention_block ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/attention_block/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_attention_block(Registry& r) {
  using namespace attention_block;
  Family f = make_attention_block();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_fused(),
    gpu_v02_fused_graph(),
    gpu_v03_fused_pdl_graph(),
    gpu_baseline_unfused(),  // the same steps without the fused kernels: the fused rungs' baseline
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

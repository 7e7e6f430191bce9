// The qk_norm_rope_cache ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/qk_norm_rope_cache/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_qk_norm_rope_cache(Registry& r) {
  using namespace qk_norm_rope_cache;
  Family f = make_qk_norm_rope_cache();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_fused(),
    gpu_v02_token_ring(),
    gpu_v03_hoisted(),
    gpu_v04_token_pairs(),
    gpu_v05_warp_specialised(),
    gpu_v06_bulk_stores(),
    gpu_v07_head_parts(),
    gpu_v08_warp_parts(),
    gpu_baseline_unfused(),  // the unfused sequence of klab launches: the fused rung's baseline
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

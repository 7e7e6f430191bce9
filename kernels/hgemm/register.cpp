// The hgemm ladder, in order. Adding a rung: one file plus one line here.
#include "kernels/hgemm/family.hpp"
#include "kernels/hgemm/tune.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_hgemm(Registry& r) {
  using namespace hgemm;
  Family f = make_hgemm();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_wmma(),
    gpu_v02_mma_ldmatrix(),
    gpu_v03_mma_swizzled(),
    gpu_v04_mma_cp_async(),
    gpu_v05_mma_tuned(),
    gpu_v06_mma_2cta(),
    gpu_v07_mma_autotuned(),
    gpu_v08_mma_persistent(),
    gpu_v09_mma_tma_producer(),
    gpu_v10_wgmma_tma(),
    gpu_v11_wgmma_warp_specialized(),
    gpu_v12_wgmma_persistent(),
    gpu_v13_wgmma_cluster_multicast(),
    gpu_v14_wgmma_tma_store(),
    gpu_v15_wgmma_cluster_tma_store(),
    gpu_v16_wgmma_split_k(),
    gpu_v17_wgmma_stream_k(),
    gpu_v18_wgmma_dispatch(),
    gpu_v19_wgmma_swap_ab(),
    gpu_v20_wgmma_pingpong(),
    gpu_v21_wgmma_stream_k_tiles(),
    gpu_v22_wgmma_stream_k_aligned(),
    gpu_v23_wgmma_swap_ab_stream_k(),
    gpu_v24_wgmma_aligned_b(),
    gpu_baseline_cublaslt(),
#endif
  };
  r.add(std::move(f));
  register_hgemm_tunable(r);  // v07's and v09's configurations, for `klab tune` (without CUDA too)
  register_v09_tunable(r);
  register_v18_tunable(r);
  register_v19_tunable(r);
}

}  // namespace klab

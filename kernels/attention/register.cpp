// The attention ladder, in order. Adding a rung: one file plus one line here. GPU rungs join once
// they pass the GPU tests on a device. cuDNN's SDPA is built only where cuDNN and its frontend's
// headers were found (sources.cmake).
#include "kernels/attention/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_attention(Registry& r) {
  using namespace attention;
  Family f = make_attention();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_materialised(),
    gpu_v02_tiled_online_softmax(),
    gpu_v03_fa2_mma(),
    gpu_v04_fa3_wgmma(),
    gpu_v05_fa3_overlap(),
    gpu_v06_fa3_persistent(),
    gpu_v07_fa4_lazy_rescale(),
    gpu_v08_fa4_poly_exp2(),
    gpu_v09_fa3_three_consumers(),
    gpu_v10_fa4_poly_three_consumers(),
    gpu_v11_fa3_wide_keys(),
    gpu_v12_fa3_fp8(),
    gpu_v13_fa2_two_row_tiles(),
    gpu_v14_fa2_lazy_rescale(),
    gpu_v15_fa3_persistent_lazy(),
    gpu_v16_fa3_tma_epilogue(),
    gpu_v17_fa3_persistent_tma_epilogue(),
    gpu_v18_fa3_persistent_q_halves(),
    gpu_v19_fa3_trimmed_diagonal(),
    gpu_v20_fa3_line_order(),
    gpu_v21_fa3_line_small_sections(),
    gpu_v22_fa3_serial_wide_keys(),
    gpu_v23_fa3_two_consumer_wide_keys(),
    gpu_v24_fa3_max_free(),
    gpu_v25_fa3_max_free_tma_epilogue(),
    gpu_v26_fa3_max_free_line_order(),
#if KLAB_HAS_CUDNN_FRONTEND
    gpu_baseline_cudnn(),
#endif
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

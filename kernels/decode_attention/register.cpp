// The decode_attention ladder, in order. Adding a rung: one file plus one line here. GPU rungs
// join once they pass the GPU tests on a device. cuDNN's SDPA (paged, and over the same KV laid
// out contiguously) is built only where cuDNN and its frontend's headers were found
// (sources.cmake).
#include "kernels/decode_attention/family.hpp"
#include "kernels/register.hpp"
#if KLAB_HAS_CUDNN_FRONTEND
#include "kernels/decode_attention/cudnn_baselines.hpp"
#endif

namespace klab {

void register_decode_attention(Registry& r) {
  using namespace decode_attention;
  Family f = make_decode_attention();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_block_per_head(),
    gpu_v02_split_kv(),
    gpu_v03_gqa_mma(),
    gpu_v04_persistent_balanced(),
    gpu_v05_staged_page_indices(),
    gpu_v06_tma_pages(),
    gpu_v07_tma_line(),
    gpu_v08_fp8_kv(),
    gpu_v09_fp8_swap_ab(),
    gpu_v10_swap_ab(),
    gpu_v11_cluster_merge(),
    gpu_v12_fp8_cluster_merge(),
    gpu_v13_cluster_push_merge(),
    gpu_v14_fp8_cluster_push_merge(),
    gpu_v15_fp8_stage_pairs(),
    gpu_v16_global_tensor_maps(),
    gpu_v17_fp8_three_ctas(),
    gpu_v18_fp8_pairs_three_ctas(),
    gpu_v19_fp8_stage_triples(),
    gpu_v20_fp8_fine_splits(),
    gpu_v21_fine_splits(),
    gpu_v22_fp8_compact_grid(),
    gpu_v23_early_issue(),
    gpu_v24_one_cta_an_sm(),
    gpu_v25_cluster_steal(),
    gpu_v26_steal_one_cta_an_sm(),
    gpu_v27_fp8_cluster_steal(),
    gpu_v28_longest_first(),
    gpu_v29_longest_first_chunks(),
    gpu_v30_fp8_longest_first(),
    gpu_v31_counter_steal(),
    gpu_v32_counter_compact_tail(),
    gpu_v36_dependent_merge(),
    gpu_v37_fp8_dependent_merge(),
    gpu_v38_fp8_table_window(),
    gpu_v39_table_window(),
    gpu_v40_fp8_longest_first_window(),
    gpu_v41_fp8_dependent_window(),
#if KLAB_HAS_CUDNN_FRONTEND
    gpu_baseline_cudnn_paged(),
    gpu_baseline_cudnn_contiguous(),
#endif
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab

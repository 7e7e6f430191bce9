# The decode_attention family (paged KV cache). The GPU rungs are compiled (so CI checks them)
# but join register.cpp's ladder only once they pass the GPU tests on a device.
#
# decode_attention.baseline_cudnn_paged (and baseline_cudnn_contiguous) run cuDNN's SDPA through
# the frontend's C++ graph API, built where attention's sources.cmake (included before this one)
# found cuDNN and the frontend's headers (KLAB_ATTENTION_CUDNN_SRC non-empty;
# KLAB_HAS_CUDNN_FRONTEND is then defined for register.cpp), with the same flags: a .cpp for the
# host side, a .cu for their device helpers (the keyless rows, the contiguous copy).
set(KLAB_DECODE_CUDNN_SRC "")
if(KLAB_ATTENTION_CUDNN_SRC)
  set(KLAB_DECODE_CUDNN_SRC baseline_cudnn_paged.cpp baseline_cudnn_paged_rows.cu)
  set_source_files_properties(decode_attention/baseline_cudnn_paged.cpp PROPERTIES
    COMPILE_OPTIONS "-isystem;${KLAB_CUDNN_FRONTEND_INCLUDE};-isystem;${KLAB_CUDNN_INCLUDE}"
    COMPILE_DEFINITIONS "CUDNN_FRONTEND_SKIP_JSON_LIB")
endif()
klab_family(decode_attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_block_per_head.cu v02_split_kv.cu v03_gqa_mma.cu
       v04_persistent_balanced.cu v05_staged_page_indices.cu v06_tma_pages.cu v07_tma_line.cu
       v08_fp8_kv.cu v09_fp8_swap_ab.cu v10_swap_ab.cu
       v11_cluster_merge.cu v12_fp8_cluster_merge.cu v13_cluster_push_merge.cu
       v14_fp8_cluster_push_merge.cu v15_fp8_stage_pairs.cu v16_global_tensor_maps.cu
       v17_fp8_three_ctas.cu v18_fp8_pairs_three_ctas.cu
       v19_fp8_stage_triples.cu v20_fp8_fine_splits.cu
       v21_fine_splits.cu v22_fp8_compact_grid.cu v23_early_issue.cu
       v24_one_cta_an_sm.cu
       v25_cluster_steal.cu
       v26_steal_one_cta_an_sm.cu
       v27_fp8_cluster_steal.cu
       v28_longest_first.cu v29_longest_first_chunks.cu v30_fp8_longest_first.cu
       v31_counter_steal.cu v32_counter_compact_tail.cu v36_dependent_merge.cu
       v37_fp8_dependent_merge.cu v38_fp8_table_window.cu v39_table_window.cu
       v40_fp8_longest_first_window.cu v41_fp8_dependent_window.cu
       ${KLAB_DECODE_CUDNN_SRC})

klab_family(hgemm
  HOST family.cpp cpu.cpp tune.cpp register.cpp
  CUDA v01_wmma.cu v02_mma_ldmatrix.cu v03_mma_swizzled.cu v04_mma_cp_async.cu v05_mma_tuned.cu v06_mma_2cta.cu v07_mma_autotuned.cu
       v08_mma_persistent.cu v09_mma_tma_producer.cu v10_wgmma_tma.cu v11_wgmma_warp_specialized.cu
       v12_wgmma_persistent.cu v13_wgmma_cluster_multicast.cu v14_wgmma_tma_store.cu
       v15_wgmma_cluster_tma_store.cu v16_wgmma_split_k.cu v17_wgmma_stream_k.cu
       v18_wgmma_dispatch.cu v19_wgmma_swap_ab.cu v20_wgmma_pingpong.cu v21_wgmma_stream_k_tiles.cu
       v22_wgmma_stream_k_aligned.cu v23_wgmma_swap_ab_stream_k.cu v24_wgmma_aligned_b.cu
       baseline_cublaslt.cu
  CUDA_LIBS CUDA::cublasLt CUDA::cublas)

klab_family(sgemm
  HOST family.cpp cpu.cpp tune.cpp tune_multistage.cpp register.cpp
  CUDA v01_naive.cu v02_coalesced.cu v03_smem_tiles.cu v04_1d_blocktile.cu v05_2d_blocktile.cu
       v06_vectorized.cu v07_bank_conflict_free.cu v08_double_buffer.cu v09_warptile.cu
       v10_autotuned.cu v11_multistage.cu v12_multistage_256x128.cu v13_multistage_at.cu
       v14_multistage_at_256x128.cu v15_hoisted_copies.cu v16_autotuned_multistage.cu
       v17_spread_copies.cu v18_tma_producer.cu
       baseline_cublas.cu
  CUDA_LIBS CUDA::cublas)

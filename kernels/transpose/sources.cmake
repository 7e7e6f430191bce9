klab_family(transpose
  HOST family.cpp cpu.cpp register.cpp tune.cpp tune_occupancy.cpp
  CUDA v01_naive.cu v02_smem_tile.cu v03_padded.cu v04_swizzled.cu v05_vectorized.cu v06_tma_pipeline.cu
       v07_high_occupancy.cu baseline_cublas.cu
  CUDA_LIBS CUDA::cublas)

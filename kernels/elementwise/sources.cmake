klab_family(elementwise
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_naive.cu v02_grid_stride.cu v03_vectorized.cu v04_vectorized_ilp.cu v05_bulk_copy_sm90.cu v06_gray_bulk_sm90.cu
       v07_bulk_tiles_sm90.cu baseline_cub.cu)

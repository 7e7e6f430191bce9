# Two families: reduce_sum (reduce_sum/) and softmax (softmax/), registered together.
# The cuDNN baseline needs libcudnn (shipped beside the toolkit here); KLAB_CUDNN is shared with
# the other families that use it (found once, cached). Without it the baseline is left out with a
# warning and register.cpp skips it (KLAB_HAS_CUDNN).
set(KLAB_REDUCTION_CUDNN_CU "")
set(KLAB_REDUCTION_CUDNN_LIB "")
if(KLAB_ENABLE_CUDA)
  if(NOT KLAB_CUDNN)
    find_library(KLAB_CUDNN cudnn PATHS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/local/cuda/lib)
  endif()
  if(KLAB_CUDNN)
    set(KLAB_REDUCTION_CUDNN_CU softmax/baseline_cudnn.cu)
    set(KLAB_REDUCTION_CUDNN_LIB ${KLAB_CUDNN})
    target_compile_definitions(klab_kernels PRIVATE KLAB_HAS_CUDNN=1)
  else()
    message(WARNING "cuDNN not found: softmax.baseline_cudnn is not built")
  endif()
endif()
klab_family(reduction
  HOST register.cpp
       reduce_sum/family.cpp reduce_sum/cpu.cpp
       softmax/family.cpp softmax/cpu.cpp
  CUDA reduce_sum/v01_smem_tree.cu reduce_sum/v02_warp_shuffle.cu reduce_sum/v03_vectorized.cu
       reduce_sum/baseline_cub.cu
       softmax/v01_naive.cu softmax/v02_block_row.cu softmax/v03_online.cu softmax/v04_registers.cu
       softmax/v05_warp_rows.cu softmax/v06_vector_spans.cu
       softmax/v07_staged_rows.cu
       ${KLAB_REDUCTION_CUDNN_CU}
  CUDA_LIBS ${KLAB_REDUCTION_CUDNN_LIB})

# The cuDNN baseline needs libcudnn (shipped beside the toolkit here); without it, it is left out
# with a warning and register.cpp skips it (KLAB_HAS_CUDNN).
set(KLAB_MAXPOOL_CUDNN_CU "")
set(KLAB_MAXPOOL_CUDNN_LIB "")
if(KLAB_ENABLE_CUDA)
  find_library(KLAB_CUDNN cudnn PATHS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/local/cuda/lib)
  if(KLAB_CUDNN)
    set(KLAB_MAXPOOL_CUDNN_CU baseline_cudnn.cu)
    set(KLAB_MAXPOOL_CUDNN_LIB ${KLAB_CUDNN})
    target_compile_definitions(klab_kernels PRIVATE KLAB_HAS_CUDNN=1)
  else()
    message(WARNING "cuDNN not found: maxpool.baseline_cudnn is not built")
  endif()
endif()
klab_family(maxpool
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_naive.cu v02_vertical_strip.cu v03_vector_rows.cu ${KLAB_MAXPOOL_CUDNN_CU}
  CUDA_LIBS ${KLAB_MAXPOOL_CUDNN_LIB})

# The attention forward family. The GPU rungs are compiled (so CI checks them); each joins
# register.cpp's ladder once it passes the GPU tests on a device.
#
# attention.baseline_cudnn runs cuDNN's SDPA through the cuDNN frontend's C++ graph API. It needs
# libcudnn (KLAB_CUDNN, shared with maxpool's and softmax's baselines, found once) with cudnn.h,
# and the frontend's headers (header-only): PyPI's nvidia-cudnn-frontend wheel, which
# scripts/setup.sh installs into .deps/cudnn-frontend; else the wheel where python3 has it
# installed; or KLAB_CUDNN_FRONTEND_INCLUDE set by hand. Without any of them the baseline is left
# out with a warning and register.cpp skips it (KLAB_HAS_CUDNN_FRONTEND). Its file is a .cpp: the
# frontend is host code only, and nvcc's front end takes minutes over its headers where g++ takes
# one; the kernel that writes the rows cuDNN is not given is in a .cu beside it.
set(KLAB_ATTENTION_CUDNN_SRC "")
set(KLAB_ATTENTION_CUDNN_LIB "")
if(KLAB_ENABLE_CUDA)
  if(NOT KLAB_CUDNN)
    find_library(KLAB_CUDNN cudnn PATHS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/local/cuda/lib)
  endif()
  if(KLAB_CUDNN)
    get_filename_component(klab_cudnn_libdir "${KLAB_CUDNN}" DIRECTORY)
    find_path(KLAB_CUDNN_INCLUDE cudnn.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} "${klab_cudnn_libdir}/../include")
  endif()
  find_program(KLAB_PYTHON3 python3)
  set(klab_fe_hint "")
  if(KLAB_PYTHON3)
    execute_process(
      COMMAND ${KLAB_PYTHON3} -c "import importlib.metadata as m; print(m.distribution('nvidia-cudnn-frontend').locate_file('include'))"
      OUTPUT_VARIABLE klab_fe_hint OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_path(KLAB_CUDNN_FRONTEND_INCLUDE cudnn_frontend.h
            PATHS ${CMAKE_SOURCE_DIR}/.deps/cudnn-frontend/include ${klab_fe_hint} NO_DEFAULT_PATH)
  if(KLAB_CUDNN AND KLAB_CUDNN_INCLUDE AND KLAB_CUDNN_FRONTEND_INCLUDE)
    set(KLAB_ATTENTION_CUDNN_SRC baseline_cudnn.cpp baseline_cudnn_empty_rows.cu)
    # nvrtc: the frontend's headers define an sm_100 engine (RMSNorm-SiLU) that compiles its
    # kernel with NVRTC, and its calls are linked in whatever graph is used.
    set(KLAB_ATTENTION_CUDNN_LIB ${KLAB_CUDNN} CUDA::nvrtc)
    # -isystem: the frontend's headers are not held to klab's warnings. JSON serialisation of
    # graphs is not used (CUDNN_FRONTEND_SKIP_JSON_LIB leaves its bundled JSON parser out).
    set_source_files_properties(attention/baseline_cudnn.cpp PROPERTIES
      COMPILE_OPTIONS "-isystem;${KLAB_CUDNN_FRONTEND_INCLUDE};-isystem;${KLAB_CUDNN_INCLUDE}"
      COMPILE_DEFINITIONS "CUDNN_FRONTEND_SKIP_JSON_LIB")
    target_compile_definitions(klab_kernels PRIVATE KLAB_HAS_CUDNN_FRONTEND=1)
    message(STATUS "attention.baseline_cudnn: cuDNN ${KLAB_CUDNN}, frontend ${KLAB_CUDNN_FRONTEND_INCLUDE}")
  elseif(NOT KLAB_CUDNN)
    message(WARNING "cuDNN not found: attention.baseline_cudnn is not built")
  else()
    message(WARNING "cuDNN frontend headers not found (scripts/setup.sh installs them into "
                    ".deps/cudnn-frontend; or set KLAB_CUDNN_FRONTEND_INCLUDE): "
                    "attention.baseline_cudnn is not built")
  endif()
endif()
klab_family(attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_materialised.cu v02_tiled_online_softmax.cu v03_fa2_mma.cu v04_fa3_wgmma.cu
       v05_fa3_overlap.cu v06_fa3_persistent.cu v07_fa4_lazy_rescale.cu v08_fa4_poly_exp2.cu
       v09_fa3_three_consumers.cu v10_fa4_poly_three_consumers.cu v11_fa3_wide_keys.cu
       v12_fa3_fp8.cu v13_fa2_two_row_tiles.cu
       v14_fa2_lazy_rescale.cu v15_fa3_persistent_lazy.cu
       v16_fa3_tma_epilogue.cu v17_fa3_persistent_tma_epilogue.cu
       v18_fa3_persistent_q_halves.cu v19_fa3_trimmed_diagonal.cu v20_fa3_line_order.cu
       v21_fa3_line_small_sections.cu v22_fa3_serial_wide_keys.cu
       v23_fa3_two_consumer_wide_keys.cu v24_fa3_max_free.cu
       v25_fa3_max_free_tma_epilogue.cu v26_fa3_max_free_line_order.cu
       ${KLAB_ATTENTION_CUDNN_SRC}
  CUDA_LIBS ${KLAB_ATTENTION_CUDNN_LIB})

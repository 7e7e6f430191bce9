# klab_add_test(NAME name LABEL cpu|gpu COMMAND ...)
# GPU tests exit 77 when no device is present; CTest reports them as skipped, never passed.
function(klab_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL" "COMMAND" ${ARGN})
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES LABELS ${T_LABEL} SKIP_RETURN_CODE 77)
endfunction()

# Common warnings for klab's own host code.
function(klab_target_defaults target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  # GCC 12's -Wrestrict misfires on std::string concatenation inlined at -O3 (GCC bug 105329):
  # dozens of false warnings that would hide real ones.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(KLAB_ENABLE_CUDA)
    target_compile_definitions(${target} PUBLIC KLAB_HAS_CUDA=1)
  else()
    target_compile_definitions(${target} PUBLIC KLAB_HAS_CUDA=0)
  endif()
endfunction()

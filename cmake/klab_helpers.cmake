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
  if(KLAB_ENABLE_CUDA)
    target_compile_definitions(${target} PUBLIC KLAB_HAS_CUDA=1)
  else()
    target_compile_definitions(${target} PUBLIC KLAB_HAS_CUDA=0)
  endif()
endfunction()

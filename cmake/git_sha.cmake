# Writes OUT (a header with the current git sha, "-dirty" when the tree has changes) only when it
# changed, so the sha in result records is the build's, not the configure step's.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "#pragma once\n// Generated at build time by cmake/git_sha.cmake.\nnamespace klab::build {\ninline constexpr const char* kGitSha = \"${sha}\";\n}\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()

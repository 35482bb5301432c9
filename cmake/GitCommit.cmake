# NEARSCAPE_COMMIT: `git describe` of the source tree at configure time, "unknown" outside git
# (a source tarball) or without git.
set(NEARSCAPE_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _describe RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0 AND _describe)
    set(NEARSCAPE_COMMIT "${_describe}")
  endif()
endif()

# Sanitizer and fuzzing builds (issue 22): presets asan, tsan and fuzz (CMakePresets.json), run
# by scripts/ci-hardening.sh. Included by the top-level CMakeLists.txt before any target, so that
# everything built in the tree (engine, CLI, tests, fuzz targets) is instrumented alike.
#
#   NEARSCAPE_SANITIZE=address   AddressSanitizer + UndefinedBehaviorSanitizer (g++ or clang)
#   NEARSCAPE_SANITIZE=thread    ThreadSanitizer (clang: its libomp cooperates with TSan through
#                                the Archer tool; g++'s libgomp is not instrumented and every
#                                OpenMP barrier would be a false report)
#   NEARSCAPE_BUILD_FUZZ=ON      libFuzzer targets in tests/fuzz (clang only; implies address):
#                                the engine gets coverage instrumentation (fuzzer-no-link)
#
# Every UBSan finding aborts (-fno-sanitize-recover): a test or a fuzz run with one fails.

set(NEARSCAPE_SANITIZE "" CACHE STRING
  "Instrument the build: address (ASan + UBSan), thread (TSan), or empty for none")
set_property(CACHE NEARSCAPE_SANITIZE PROPERTY STRINGS "" address thread)
option(NEARSCAPE_BUILD_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; implies address)" OFF)

if(NEARSCAPE_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NEARSCAPE_BUILD_FUZZ needs clang (libFuzzer): "
                        "configure with -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang "
                        "(or the preset 'fuzz')")
  endif()
  if(NEARSCAPE_SANITIZE STREQUAL "")
    set(NEARSCAPE_SANITIZE address CACHE STRING "" FORCE)
  elseif(NOT NEARSCAPE_SANITIZE STREQUAL "address")
    message(FATAL_ERROR "NEARSCAPE_BUILD_FUZZ runs with ASan + UBSan, not '${NEARSCAPE_SANITIZE}'")
  endif()
endif()

if(NEARSCAPE_SANITIZE STREQUAL "address")
  set(_nearscape_sanitizers address,undefined)
elseif(NEARSCAPE_SANITIZE STREQUAL "thread")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NEARSCAPE_SANITIZE=thread needs clang (its OpenMP runtime works with "
                        "TSan; g++'s libgomp gives false reports): -DCMAKE_CXX_COMPILER=clang++ "
                        "-DCMAKE_C_COMPILER=clang (or the preset 'tsan')")
  endif()
  set(_nearscape_sanitizers thread)
elseif(NOT NEARSCAPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "NEARSCAPE_SANITIZE must be address, thread or empty, not '${NEARSCAPE_SANITIZE}'")
endif()

if(DEFINED _nearscape_sanitizers)
  message(STATUS "Sanitizers: ${_nearscape_sanitizers}; fuzz targets: ${NEARSCAPE_BUILD_FUZZ}")
  add_compile_options(-fsanitize=${_nearscape_sanitizers} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_nearscape_sanitizers})
  if(NEARSCAPE_SANITIZE STREQUAL "address")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  if(NEARSCAPE_BUILD_FUZZ)
    # Coverage for libFuzzer in everything; only the fuzz targets link libFuzzer's main().
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endif()

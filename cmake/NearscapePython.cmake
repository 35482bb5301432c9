# Decides whether the Python module `nearscape` (python/) is built: NEARSCAPE_BUILD_PYTHON is ON
# when pybind11 (Debian's pybind11-dev) and the Python 3 headers are found, outside sanitizer
# builds. The rest of the build never needs them.
# Debian's own interpreter first: the module is for /usr/lib/python3/dist-packages, whose NumPy a
# pyenv or venv interpreter earlier on PATH would not see (-DPython3_EXECUTABLE=… overrides).
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
set(_nearscape_python_default OFF)
# Not in sanitizer builds: an instrumented engine cannot be loaded into the uninstrumented python3.
if(Python3_FOUND AND NEARSCAPE_SANITIZE STREQUAL "")
  find_package(pybind11 CONFIG QUIET)
  if(pybind11_FOUND)
    set(_nearscape_python_default ON)
  endif()
endif()
option(NEARSCAPE_BUILD_PYTHON "Build the Python module (pybind11)" ${_nearscape_python_default})
if(NEARSCAPE_BUILD_PYTHON)
  if(NOT Python3_FOUND)
    message(FATAL_ERROR "NEARSCAPE_BUILD_PYTHON needs Python 3's headers (python3-dev)")
  endif()
  find_package(pybind11 CONFIG REQUIRED)
  message(STATUS "Nearscape: Python module for ${Python3_EXECUTABLE} (pybind11 ${pybind11_VERSION})")
elseif(NOT NEARSCAPE_SANITIZE STREQUAL "")
  message(STATUS "Nearscape: no Python module in a sanitizer build")
else()
  message(STATUS "Nearscape: no Python module (pybind11-dev or python3-dev not found)")
endif()

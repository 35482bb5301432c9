# CPack: the Debian package. `cmake --preset package && cmake --build --preset package --target
# package` gives nearscape_<version>_amd64.deb. Layout (all relative, so `dpkg -x` works too):
#   bin/nearscape, bin/nearscape-cli           RUNPATH $ORIGIN/../lib/nearscape
#   lib/nearscape/libnearscape_engine.so       the CPU engine (private)
#   lib/nearscape/libnearscape_cuda.so         the CUDA plugin, in a build with CUDA
#   lib/python3/dist-packages/nearscape/       the Python module (NEARSCAPE_BUILD_PYTHON), its
#                                              extension's RUNPATH $ORIGIN/../../../nearscape
#   share/{applications,metainfo,mime,icons,man,bash-completion,doc}
set(_res ${PROJECT_SOURCE_DIR}/resources)
install(FILES ${_res}/nearscape.desktop DESTINATION share/applications)
install(FILES ${_res}/io.nearscape.Nearscape.metainfo.xml DESTINATION share/metainfo)
install(FILES ${_res}/nearscape-mime.xml DESTINATION share/mime/packages RENAME nearscape.xml)
install(FILES ${_res}/nearscape.svg DESTINATION share/icons/hicolor/scalable/apps)
install(FILES ${_res}/completion/nearscape-cli DESTINATION share/bash-completion/completions)
if(NEARSCAPE_BUILD_APP)
  install(FILES ${_res}/completion/nearscape DESTINATION share/bash-completion/completions)
endif()

# Man pages from the programs' own --help at build time (cmake/ManPage.cmake), gzipped as
# Debian wants them (-n: no time stamp, so the package is reproducible).
set(_man_pages)
set(_man_programs nearscape-cli)
set(_summary_nearscape-cli "kNN graphs, ANN indexes, maps and min-max paths for embeddings, headless")
if(NEARSCAPE_BUILD_APP)
  list(APPEND _man_programs nearscape)
  set(_summary_nearscape "desktop explorer for embeddings")
endif()
foreach(_program IN LISTS _man_programs)
  set(_page ${CMAKE_BINARY_DIR}/man/${_program}.1)
  add_custom_command(OUTPUT ${_page}.gz
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${_program}> -DNAME=${_program}
            "-DSUMMARY=${_summary_${_program}}" -DVERSION=${PROJECT_VERSION}
            -DROFF_DIR=${_res}/man -DOUT=${_page} -P ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
    COMMAND gzip -9nf ${_page}
    DEPENDS ${_program} ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake ${_res}/man/common.roff
    COMMENT "Man page ${_program}.1 from ${_program} --help" VERBATIM)
  list(APPEND _man_pages ${_page}.gz)
endforeach()
add_custom_target(man_pages ALL DEPENDS ${_man_pages})
install(FILES ${_man_pages} DESTINATION share/man/man1)

# Debian wants a copyright file and a compressed changelog (changelog.gz: a native package)
# in the package's doc folder.
configure_file(${PROJECT_SOURCE_DIR}/installer/copyright ${CMAKE_BINARY_DIR}/doc/copyright COPYONLY)
configure_file(${PROJECT_SOURCE_DIR}/installer/changelog ${CMAKE_BINARY_DIR}/doc/changelog
               COPYONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/doc/changelog.gz
  COMMAND gzip -9nkf ${CMAKE_BINARY_DIR}/doc/changelog
  DEPENDS ${CMAKE_BINARY_DIR}/doc/changelog)
add_custom_target(package_docs ALL DEPENDS ${CMAKE_BINARY_DIR}/doc/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/doc/copyright ${CMAKE_BINARY_DIR}/doc/changelog.gz
        DESTINATION share/doc/nearscape)

set(CPACK_PACKAGE_NAME nearscape)
set(CPACK_PACKAGE_VENDOR "Nearscape")
# The maintainer's address: a placeholder until the project has one (also in changelog).
set(NEARSCAPE_MAINTAINER "Nearscape developers <nearscape@example.org>" CACHE STRING
    "The package's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${NEARSCAPE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "desktop explorer for embeddings")
# The extended description; CPack puts the summary above it and indents each line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Nearscape draws a map of a file of image or text embeddings and lets you
explore true neighbourhoods, exact and approximate kNN graphs, min-max paths
between items and the recall/speed trade-offs of ANN indexes. It reads
NumPy, TEXMEX, ann-benchmarks HDF5, TensorBoard TSV and IDX files; the
headless nearscape-cli runs the same engine, and so does the Python module
nearscape, on NumPy arrays (import nearscape; nearscape.show(x) opens the
explorer on an array).
.
The CUDA backend is a plugin loaded at run time: with an NVIDIA driver and
cuBLAS 13 the GPU is used, otherwise the CPU.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
# Depends from dpkg-shlibdeps (runtime packages only). The private folder resolves the engine
# library; cuBLAS (the plugin's, from NVIDIA's packages) has no Debian package and is left out.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/engine)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, fasttext")
if(NEARSCAPE_BUILD_PYTHON)
  # The module is built for one Python 3 version (its extension's ABI tag) and needs NumPy; the
  # programs need neither, so Python is recommended, not required.
  math(EXPR _python_next "${Python3_VERSION_MINOR} + 1")
  string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS
         ", python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}~)"
         ", python3 (<< ${Python3_VERSION_MAJOR}.${_python_next}), python3-numpy")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Files installed by hand above land as 0644; directories 0755 (lintian checks both).
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)

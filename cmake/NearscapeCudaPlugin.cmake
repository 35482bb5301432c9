# The CUDA backend as a run-time plugin, libnearscape_cuda.so (included from engine/, where the
# sources live). Everything that needs the CUDA toolkit is here: kernels, cuBLAS, cudart. The
# programs link none of it; src/gpu/PluginLoader.cpp dlopens the plugin when a GPU is wanted.
add_library(nearscape_cuda MODULE
  src/cuda/CudaPlugin.cpp
  src/cuda/CudaRuntime.cpp
  src/cuda/CudaKnn.cpp
  src/cuda/CudaIndex.cpp
  src/cuda/CudaKMeans.cpp
  src/cuda/CudaGraph.cpp
  src/cuda/CudaLayout.cpp
  src/cuda/CudaAnalysis.cpp
  src/cuda/DeviceQuery.cu
  src/cuda/RowNorms.cu
  src/cuda/Resources.cu
  src/cuda/Primitives.cu
  src/cuda/ExactRows.cu
  src/cuda/ExactPass.cu
  src/cuda/FusedTiles.cu
  src/cuda/ShareExchange.cu
  src/cuda/ExactKnn.cu
  src/cuda/DirectRows.cu
  src/cuda/StepKnn.cu
  src/cuda/DeviceKMeans.cu
  src/cuda/Upload.cu
  src/cuda/TopK.cu
  src/cuda/GraphSearch.cu
  src/cuda/Boruvka.cu
  src/cuda/SearchGraphPrune.cu
  src/cuda/GraphLayout.cu
  src/cuda/Ivf.cu
  src/cuda/Gnnd.cu
  src/cuda/RangeSearch.cu
)
target_include_directories(nearscape_cuda PRIVATE src)
# Warnings on in the CUDA sources too: the host compiler's (-Wall -Wextra, through nvcc), the
# device front end's (--Wreorder, --Wext-lambda-captures-this); nvcc's own warnings are errors.
target_compile_options(nearscape_cuda PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo -Xcompiler=-fopenmp
    -Xcompiler=-Wall,-Wextra,-Wno-unknown-pragmas --Wreorder --Wext-lambda-captures-this
    -Werror=all-warnings>
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unknown-pragmas>)

# The plugin calls back into the engine (errors, JobControl, the kNN helpers) through the one
# shared libnearscape_engine.so the program already loaded: one copy of each exception type, so
# a DeviceOutOfMemory thrown here is caught as one there. --no-undefined: a missing engine symbol
# fails the link, not the user's dlopen.
target_link_libraries(nearscape_cuda PRIVATE nearscape_engine CUDA::cudart_static)
target_link_options(nearscape_cuda PRIVATE -Wl,--no-undefined)

# cuBLAS: statically when the toolkit ships the static libraries (then the plugin needs only the
# driver); the CUDA 13.0 toolkit here ships only libcublas.so.13 / libcublasLt.so.13, which the
# plugin then needs at run time — from the system (NVIDIA's CUDA packages) or, with
# NEARSCAPE_BUNDLE_CUBLAS, copied beside it into the package (about 600 MB).
if(TARGET CUDA::cublas_static AND TARGET CUDA::cublasLt_static)
  target_link_libraries(nearscape_cuda PRIVATE CUDA::cublas_static CUDA::cublasLt_static)
  set(_nearscape_cublas "static")
else()
  target_link_libraries(nearscape_cuda PRIVATE CUDA::cublas)
  set(_nearscape_cublas "shared (libcublas.so.${CUDAToolkit_VERSION_MAJOR})")
endif()
option(NEARSCAPE_BUNDLE_CUBLAS "Install the toolkit's shared cuBLAS beside the CUDA plugin" OFF)
message(STATUS "Nearscape: CUDA plugin libnearscape_cuda.so; cuBLAS ${_nearscape_cublas}, "
               "bundled: ${NEARSCAPE_BUNDLE_CUBLAS}")

# Beside the engine library: that is where the loader looks first, in the build tree and in the
# package. $ORIGIN: bundled cuBLAS, when there is one, wins over the system's.
set_target_properties(nearscape_cuda PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
  CUDA_SEPARABLE_COMPILATION OFF
  INSTALL_RPATH "$ORIGIN")
install(TARGETS nearscape_cuda LIBRARY DESTINATION lib/nearscape)

if(NEARSCAPE_BUNDLE_CUBLAS AND NOT _nearscape_cublas STREQUAL "static")
  foreach(_lib cublas cublasLt)
    get_target_property(_path CUDA::${_lib} IMPORTED_LOCATION)
    file(REAL_PATH "${_path}" _real)
    install(FILES "${_real}" DESTINATION lib/nearscape
            RENAME lib${_lib}.so.${CUDAToolkit_VERSION_MAJOR})
  endforeach()
endif()

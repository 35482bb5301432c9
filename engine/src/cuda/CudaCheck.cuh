#pragma once
// Every CUDA call goes through NEARSCAPE_CUDA_CHECK (allocations through NEARSCAPE_CUDA_ALLOC,
// launches through NEARSCAPE_CUDA_CHECK_LAUNCH): an allocation failure becomes DeviceOutOfMemory,
// anything else a DeviceError naming the call, file and line. The fault hook of
// FaultInjection.cuh can make allocations and launches fail.

#include "cuda/FaultInjection.cuh"
#include "nearscape/core/Error.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

namespace nearscape::cuda::detail {

/// "ExactKnn.cu:596": the source file without its folders, and the line.
inline std::string sourceLocation(const char* file, int line) {
  const char* slash = std::strrchr(file, '/');
  return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  std::string message = std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
                        sourceLocation(file, line) + ")";
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError(); // not sticky: cleared, so that the fallback's first check does not see it
    throw DeviceOutOfMemory(message);
  }
  throw DeviceError(message);
}

inline void checkLaunch(const char* file, int line) {
  const cudaError_t status = fault::inject(fault::Site::Launch, file, line)
                                 ? cudaErrorLaunchOutOfResources
                                 : cudaGetLastError();
  if (status != cudaSuccess)
    throwCudaError(status, "kernel launch", file, line);
}

} // namespace nearscape::cuda::detail

#define NEARSCAPE_CUDA_CHECK(call)                                                                 \
  do {                                                                                             \
    const cudaError_t nearscapeStatus_ = (call);                                                   \
    if (nearscapeStatus_ != cudaSuccess)                                                           \
      ::nearscape::cuda::detail::throwCudaError(nearscapeStatus_, #call, __FILE__, __LINE__);      \
  } while (false)

/// A device or pinned-host allocation: out of memory becomes DeviceOutOfMemory. The fault hook
/// can make it fail (without calling it) as the allocation made at FILE:LINE.
#define NEARSCAPE_CUDA_ALLOC(call) NEARSCAPE_CUDA_ALLOC_AT(call, __FILE__, __LINE__)
#define NEARSCAPE_CUDA_ALLOC_AT(call, file, line)                                                  \
  do {                                                                                             \
    const cudaError_t nearscapeStatus_ =                                                           \
        ::nearscape::cuda::fault::inject(::nearscape::cuda::fault::Site::Alloc, file, line)        \
            ? cudaErrorMemoryAllocation                                                            \
            : (call);                                                                              \
    if (nearscapeStatus_ != cudaSuccess)                                                           \
      ::nearscape::cuda::detail::throwCudaError(nearscapeStatus_, #call, file, line);              \
  } while (false)

/// After a kernel launch: reports launch errors at once.
#define NEARSCAPE_CUDA_CHECK_LAUNCH() ::nearscape::cuda::detail::checkLaunch(__FILE__, __LINE__)

/// A limit of a GPU path (k, dimensions, rows): Unsupported, so that `auto` runs the CPU instead.
#define NEARSCAPE_GPU_LIMIT(cond, message)                                                         \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::nearscape::Unsupported(message);                                                     \
  } while (false)

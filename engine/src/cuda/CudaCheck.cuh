#pragma once
// Every CUDA call goes through NEARSCAPE_CUDA_CHECK: an allocation failure becomes
// DeviceOutOfMemory, anything else an Error naming the call, file and line.

#include "nearscape/core/Error.h"

#include <cuda_runtime.h>

#include <string>

namespace nearscape::cuda::detail {

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  std::string message = std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
                        file + ":" + std::to_string(line) + ")";
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError(); // not sticky: cleared, so that the fallback's first check does not see it
    throw DeviceOutOfMemory(message);
  }
  throw Error(message);
}

} // namespace nearscape::cuda::detail

#define NEARSCAPE_CUDA_CHECK(call)                                                                 \
  do {                                                                                             \
    const cudaError_t nearscapeStatus_ = (call);                                                   \
    if (nearscapeStatus_ != cudaSuccess)                                                           \
      ::nearscape::cuda::detail::throwCudaError(nearscapeStatus_, #call, __FILE__, __LINE__);      \
  } while (false)

/// After a kernel launch: reports launch errors at once.
#define NEARSCAPE_CUDA_CHECK_LAUNCH() NEARSCAPE_CUDA_CHECK(cudaGetLastError())

/// A limit of a GPU path (k, dimensions, rows): Unsupported, so that `auto` runs the CPU instead.
#define NEARSCAPE_GPU_LIMIT(cond, message)                                                         \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::nearscape::Unsupported(message);                                                     \
  } while (false)

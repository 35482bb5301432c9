#pragma once
// cuBLAS calls go through NEARSCAPE_CUBLAS_CHECK (an allocation failure becomes
// DeviceOutOfMemory, anything else a DeviceError; the fault hook can make them fail);
// CublasHandle owns a handle.

#include "cuda/FaultInjection.cuh"
#include "nearscape/core/Error.h"

#include <cublas_v2.h>

#include <cstring>
#include <string>

namespace nearscape::cuda::detail {

/// Whether the fault hook makes the cuBLAS call at FILE:LINE fail (it is then not made).
inline bool injectCublasFault(const char* file, int line) {
  return fault::inject(fault::Site::Cublas, file, line);
}

/// Checks a cuBLAS status: an allocation failure becomes DeviceOutOfMemory, anything else a
/// DeviceError naming the function (not its arguments) and where it was called.
inline void checkCublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  const char* slash = std::strrchr(file, '/');
  const std::string message = std::string(call, std::strcspn(call, "(")) +
                              " failed: " + cublasGetStatusString(status) + " (" +
                              (slash ? slash + 1 : file) + ":" + std::to_string(line) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw DeviceOutOfMemory(message);
  throw DeviceError(message);
}

} // namespace nearscape::cuda::detail

#define NEARSCAPE_CUBLAS_CHECK(call)                                                               \
  ::nearscape::cuda::detail::checkCublas(                                                          \
      ::nearscape::cuda::detail::injectCublasFault(__FILE__, __LINE__)                             \
          ? CUBLAS_STATUS_EXECUTION_FAILED                                                         \
          : (call),                                                                                \
      #call, __FILE__, __LINE__)

namespace nearscape::cuda {

class CublasHandle {
public:
  /// `file` and `line` name the caller, for errors and the fault hook's sites.
  explicit CublasHandle(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    detail::checkCublas(detail::injectCublasFault(file, line) ? CUBLAS_STATUS_NOT_INITIALIZED
                                                              : cublasCreate(&m_handle),
                        "cublasCreate", file, line);
  }
  ~CublasHandle() { cublasDestroy(m_handle); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return m_handle; }

private:
  cublasHandle_t m_handle = nullptr;
};

} // namespace nearscape::cuda

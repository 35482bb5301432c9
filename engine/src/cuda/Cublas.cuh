#pragma once
// cuBLAS calls go through NEARSCAPE_CUBLAS_CHECK (an allocation failure becomes
// DeviceOutOfMemory); CublasHandle owns a handle.

#include "nearscape/core/Error.h"

#include <cublas_v2.h>

#include <string>

#define NEARSCAPE_CUBLAS_CHECK(call)                                                               \
  do {                                                                                             \
    const cublasStatus_t s_ = (call);                                                              \
    if (s_ == CUBLAS_STATUS_ALLOC_FAILED)                                                          \
      throw ::nearscape::DeviceOutOfMemory(std::string(#call) + " could not allocate");           \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                               \
      throw ::nearscape::Error(std::string(#call) + " failed with cuBLAS status " +               \
                               std::to_string(int(s_)));                                           \
  } while (false)

namespace nearscape::cuda {

class CublasHandle {
public:
  CublasHandle() { NEARSCAPE_CUBLAS_CHECK(cublasCreate(&m_handle)); }
  ~CublasHandle() { cublasDestroy(m_handle); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return m_handle; }

private:
  cublasHandle_t m_handle = nullptr;
};

} // namespace nearscape::cuda

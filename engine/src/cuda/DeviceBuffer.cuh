#pragma once
// An owning device allocation (plain cudaMalloc, as our GPU servers require).

#include "cuda/CudaCheck.cuh"

#include <cstddef>
#include <utility>

namespace nearscape::cuda {

template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Throws DeviceOutOfMemory when the device cannot hold `count` elements. `file` and `line`
  /// name the caller, for errors and the fault hook's sites.
  explicit DeviceBuffer(std::size_t count, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE())
      : m_count(count) {
    if (count > 0)
      NEARSCAPE_CUDA_ALLOC_AT(cudaMalloc(reinterpret_cast<void**>(&m_ptr), count * sizeof(T)), file,
                              line);
  }
  ~DeviceBuffer() {
    if (m_ptr)
      cudaFree(m_ptr);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : m_ptr(std::exchange(other.m_ptr, nullptr)), m_count(std::exchange(other.m_count, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(m_ptr, other.m_ptr);
    std::swap(m_count, other.m_count);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return m_ptr; }
  std::size_t size() const { return m_count; }

private:
  T* m_ptr = nullptr;
  std::size_t m_count = 0;
};

} // namespace nearscape::cuda

#pragma once
// An owning device allocation: plain device memory, never managed memory (our GPU servers
// require it). Made on the default stream it is cudaMalloc's; made in a stream's order it comes
// from the device's stream-ordered pool (cudaMallocAsync) and goes back in that order, so that
// neither waits for other streams' work (cudaFree waits for the whole device's). Pool memory is
// the allocating device's alone (no peer access is granted), and a free returns to the device
// only at a synchronisation: settlePool() where a cudaMemGetInfo follows.

#include "cuda/CudaCheck.cuh"

#include <cstddef>
#include <utility>

namespace nearscape::cuda {

/// Whether the current device has the stream-ordered pool (every one we run on; where not, a
/// stream's buffers are plain ones).
inline bool hasStreamOrderedPool() {
  int device = 0, supported = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) ==
             cudaSuccess &&
         supported != 0;
}

/// Waits for `stream` and hands the free memory of `device`'s pool back to the device, so that a
/// cudaMemGetInfo after it counts the buffers freed in that stream's order. For destructors:
/// reports nothing (a failure has been reported by then).
inline void settlePool(cudaStream_t stream, int device) {
  cudaStreamSynchronize(stream);
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
    cudaMemPoolTrimTo(pool, 0);
  cudaGetLastError();
}

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
  /// In `stream`'s order (nullptr: the default stream, plainly as above); used only in that
  /// stream's order and freed in it. Throws DeviceOutOfMemory.
  DeviceBuffer(std::size_t count, cudaStream_t stream, const char* file = __builtin_FILE(),
               int line = __builtin_LINE())
      : m_count(count), m_stream(stream && hasStreamOrderedPool() ? stream : nullptr) {
    if (count > 0)
      NEARSCAPE_CUDA_ALLOC_AT(
          m_stream ? cudaMallocAsync(reinterpret_cast<void**>(&m_ptr), count * sizeof(T), stream)
                   : cudaMalloc(reinterpret_cast<void**>(&m_ptr), count * sizeof(T)),
          file, line);
  }
  ~DeviceBuffer() {
    if (m_ptr)
      m_stream ? cudaFreeAsync(m_ptr, m_stream) : cudaFree(m_ptr);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : m_ptr(std::exchange(other.m_ptr, nullptr)), m_count(std::exchange(other.m_count, 0)),
        m_stream(std::exchange(other.m_stream, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(m_ptr, other.m_ptr);
    std::swap(m_count, other.m_count);
    std::swap(m_stream, other.m_stream);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return m_ptr; }
  std::size_t size() const { return m_count; }

private:
  T* m_ptr = nullptr;
  std::size_t m_count = 0;
  cudaStream_t m_stream = nullptr; ///< where it is freed (nullptr: plainly)
};

} // namespace nearscape::cuda

#pragma once
// What a CUDA entry point works with on one device, made once and reused (Faiss's GpuResources
// is the model): the device's properties, a stream, a cuBLAS handle bound to that stream, and
// scratch memory. Entry points lease a Resources for the length of a call; each lease is used by
// one thread at a time, so the handle and the scratch are never shared by two calls at once.
// The pool lives as long as the plugin: a Context is a plain value copied into jobs, so it names
// the device and the pool holds what belongs to it.

#include "cuda/Cublas.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "nearscape/core/Context.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

namespace nearscape::cuda {

class Resources {
public:
  /// Makes `device` current and creates the stream on it.
  /// Throws DeviceError (no such device, a failed CUDA call), DeviceOutOfMemory.
  explicit Resources(int device);
  ~Resources();
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;

  int device() const { return m_device; }
  const cudaDeviceProp& properties() const { return m_properties; }
  /// A blocking stream (it orders with the legacy default stream, so work that code still queues
  /// there stays ordered with this stream's).
  cudaStream_t stream() const { return m_stream; }
  /// Bound to stream(), made at its first use: work that needs no cuBLAS (a float16 search's
  /// fused tiles) never waits for cuBLAS's start beside it. Its math mode is the default one
  /// whenever a lease begins. Throws DeviceError, DeviceOutOfMemory.
  cublasHandle_t cublas();
  /// The default math mode again, where the handle was made.
  void resetMathMode();
  /// At least `bytes` of device memory, the same block until the next scratch() call that asks
  /// for more. Throws DeviceOutOfMemory.
  void* scratch(std::size_t bytes);
  /// Gives back scratch memory beyond `keepBytes` (when a lease ends: an idle pool entry must not
  /// hold memory other work needs).
  void trimScratch(std::size_t keepBytes);
  /// Makes the device current on the calling thread. Throws DeviceError.
  void makeCurrent() const;

private:
  int m_device = 0;
  cudaDeviceProp m_properties{};
  cudaStream_t m_stream = nullptr;
  std::unique_ptr<CublasHandle> m_cublas;
  DeviceBuffer<unsigned char> m_scratch;
};

/// One call's use of a Resources, given back to the pool when it ends.
class ResourceLease {
public:
  ResourceLease(ResourceLease&& other) noexcept;
  ResourceLease& operator=(ResourceLease&&) = delete;
  ResourceLease(const ResourceLease&) = delete;
  ~ResourceLease();
  Resources& operator*() const { return *m_resources; }
  Resources* operator->() const { return m_resources.get(); }

private:
  friend ResourceLease leaseResources(int device);
  explicit ResourceLease(std::unique_ptr<Resources> resources);
  std::unique_ptr<Resources> m_resources;
};

/// Resources for `device` (made current on the calling thread): a free one from the pool, or a
/// new one. Throws DeviceError, DeviceOutOfMemory.
ResourceLease leaseResources(int device);
/// The same for `context.device`.
inline ResourceLease leaseResources(const Context& context) {
  return leaseResources(context.device);
}

} // namespace nearscape::cuda

#include "cuda/CudaRuntime.h"

#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace nearscape::cuda {
namespace {

/// A device's properties, fixed for the process: read once (cudaGetDeviceProperties fills some
/// hundred fields through the driver, tens of microseconds that every batch-1 search paid in
/// its report's device name).
bool cachedProperties(int ordinal, cudaDeviceProp& prop, cudaError_t& status) {
  static std::mutex mutex;
  static std::unordered_map<int, cudaDeviceProp> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(ordinal); it != known.end()) {
    prop = it->second;
    return true;
  }
  status = cudaGetDeviceProperties(&prop, ordinal);
  if (status != cudaSuccess)
    return false;
  known.emplace(ordinal, prop);
  return true;
}

} // namespace

DeviceInfo queryDevice(int ordinal) {
  DeviceInfo info;
  info.compiledWithCuda = true;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.reason = cudaGetErrorString(status);
    // The two common desktop cases, said plainly: no driver at all, or one older than the
    // runtime this plugin was built with (cudaDriverGetVersion answers 0 without libcuda.so.1).
    int driver = 0;
    cudaDriverGetVersion(&driver);
    const auto version = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    if (driver == 0 && status == cudaErrorInsufficientDriver)
      info.reason = "no NVIDIA driver (libcuda.so.1 not found)";
    else if (driver != 0 && driver < CUDART_VERSION)
      info.reason = "the NVIDIA driver is too old: it supports CUDA " + version(driver) +
                    ", the CUDA backend needs " + version(CUDART_VERSION) + " (" + info.reason +
                    ")";
    cudaGetLastError(); // clear the sticky-free error so later calls start clean
    return info;
  }
  if (count == 0 || ordinal < 0 || ordinal >= count) {
    info.reason = count == 0 ? "no CUDA device" : "no CUDA device #" + std::to_string(ordinal);
    return info;
  }
  cudaDeviceProp prop{};
  if (cachedProperties(ordinal, prop, status))
    status = cudaSetDevice(ordinal);
  size_t freeBytes = 0, totalBytes = 0;
  if (status == cudaSuccess)
    status = cudaMemGetInfo(&freeBytes, &totalBytes);
  if (status != cudaSuccess) {
    info.reason = cudaGetErrorString(status);
    cudaGetLastError();
    return info;
  }
  info.usable = true;
  info.name = prop.name;
  info.totalMemory = totalBytes;
  info.freeMemory = freeBytes;
  info.computeCapability = prop.major * 10 + prop.minor;
  return info;
}

} // namespace nearscape::cuda

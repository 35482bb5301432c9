#pragma once
// The plugin's device runtime (gpu::DeviceRuntime): device queries, the warm-up, row norms.
// Shared by DeviceQuery.cu, Resources.cu, RowNorms.cu (and Ivf.cu, which takes the norms of
// rows already on the device); offered to the engine by CudaRuntime.cpp.

#include "gpu/DeviceRuntime.h"
#include "nearscape/core/Context.h"
#include "nearscape/gpu/Devices.h"

#include <atomic>
#include <cstdint>

namespace nearscape::cuda {

/// Never throws: any CUDA error means "not usable", with the error's text as the reason.
DeviceInfo queryDevice(int ordinal);

/// out[i] = ‖row i‖² for a host n × d matrix, computed on device `ordinal`.
/// Throws DeviceOutOfMemory, Error on any other CUDA failure.
void rowNormsSquared(const float* hostData, std::int64_t n, std::int64_t d, float* hostOut,
                     int ordinal);

/// The same for rows already on the current device (n × d) into `deviceOut` (n), on the
/// default stream (float64 accumulation). Throws Error.
void rowNormsSquaredOnDevice(const float* deviceRows, std::int64_t n, std::int64_t d,
                             float* deviceOut);

/// gpu::DeviceRuntime::warmUp: a lease of `context`'s device (made and pooled), the pinned
/// staging set, a 64 × 64 TF32 GEMM on it and, while `float16Gemm` holds, a float16 GEMM of the
/// exact path's tile shape (Resources.cu). Throws DeviceError, DeviceOutOfMemory.
void warmUp(const Context& context, const std::atomic<bool>& float16Gemm);

/// The plugin's gpu::DeviceRuntime (one for the process).
gpu::DeviceRuntime& runtimeDevice();

} // namespace nearscape::cuda

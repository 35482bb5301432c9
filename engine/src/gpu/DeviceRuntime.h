#pragma once
// The device itself, apart from any algorithm: what it is (queryDevice, deviceCount), its start
// (warmUp) and the row norms that several domains' device work begins with. The CUDA plugin's
// CudaRuntime implements it (cuda/CudaRuntime.h); the loader refuses a whole plugin whose
// runtime interface is stale, since without it no device can be asked anything.

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/gpu/Devices.h"

#include <atomic>

namespace nearscape::gpu {

/// Each call runs on device `context.device`; host memory in and out.
class DeviceRuntime {
public:
  /// Bumped whenever a declaration below, or a type it passes, changes.
  static constexpr int kVersion = 1;
  virtual ~DeviceRuntime() = default;

  /// Never throws: any error means "not usable", with the error's text as the reason.
  virtual DeviceInfo queryDevice(int ordinal) = 0;
  /// How many CUDA devices the driver shows (0 on any error). Never throws.
  virtual int deviceCount() = 0;
  /// Starts `context`'s device: its CUDA context, a pooled stream and cuBLAS handle, and one
  /// small GEMM (cuBLAS loads its first kernels), so that later calls do not wait for them;
  /// then, where `float16Gemm` still holds when it is reached, a float16 GEMM of the exact path's
  /// tile shape (DeviceWarmUp::leaveOutFloat16Gemm clears it).
  /// Throws DeviceError, DeviceOutOfMemory.
  virtual void warmUp(const Context& context, const std::atomic<bool>& float16Gemm) = 0;
  /// out[i] = ‖row i‖² (float64 accumulation). Throws DeviceOutOfMemory, DeviceError.
  virtual void rowNormsSquared(const MatrixView<float>& m, float* out, const Context& context) = 0;
};

} // namespace nearscape::gpu

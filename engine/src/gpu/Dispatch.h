#pragma once
// The one place where work chooses the GPU or the CPU, and falls back from one to the other.

#include "gpu/Plugin.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
#include "nearscape/gpu/Devices.h"

#include <string>
#include <utility>

namespace nearscape::gpu {

/// Interface `Device` of the loaded plugin (gpu::device). Throws DeviceError, with the reason,
/// when the plugin offers none (a stale interface version): the caller's CPU twin takes over as
/// for any other device error.
template <typename Device> Device& requireDevice() {
  std::string why;
  if (Device* found = device<Device>(&why))
    return *found;
  throw DeviceError(why);
}

/// Runs `onGpu(Device&)` — `Device` the domain's interface (knn/KnnDevice.h, …) — when `context`
/// resolves to the GPU, else `onCpu()`. When the GPU cannot do the work — DeviceOutOfMemory
/// (after its own smaller tiles and streaming), Unsupported (a limit of the GPU path) or
/// DeviceError (a failed GPU call, or a plugin whose interface for this domain was refused) — and
/// the GPU was not asked for by name, `onCpu()` runs instead and `fallback`, when given, receives
/// why ("GPU out of memory: …"). With `--backend cuda` those errors propagate. Both must return
/// the same type.
template <typename Device, typename OnGpu, typename OnCpu>
auto onGpuOrCpu(const Context& context, OnGpu&& onGpu, OnCpu&& onCpu,
                std::string* fallback = nullptr) -> decltype(onCpu()) {
  if (resolveBackend(context) == Backend::Cuda) {
    std::string why;
    try {
      return std::forward<OnGpu>(onGpu)(requireDevice<Device>());
    } catch (const DeviceOutOfMemory& e) {
      if (context.backend == Backend::Cuda)
        throw;
      why = std::string("GPU out of memory: ") + e.what();
    } catch (const Unsupported& e) {
      if (context.backend == Backend::Cuda)
        throw;
      why = std::string("beyond the GPU path: ") + e.what();
    } catch (const DeviceError& e) {
      if (context.backend == Backend::Cuda)
        throw;
      why = std::string("GPU error: ") + e.what();
    }
    logMessage(context, LogLevel::Info, "running on the CPU: " + why);
    if (fallback)
      *fallback = why;
  }
  return std::forward<OnCpu>(onCpu)();
}

/// Runs `onDevice()`, work on a GPU structure made earlier (an index's device copy), and returns
/// true. When it fails for lack of memory or with a GPU error and the GPU was not asked for by
/// name, returns false instead, so that the caller runs its CPU twin on its host copy.
template <typename OnDevice> bool tryOnDevice(const Context& context, OnDevice&& onDevice) {
  try {
    std::forward<OnDevice>(onDevice)();
    return true;
  } catch (const DeviceOutOfMemory&) {
    if (context.backend == Backend::Cuda)
      throw;
  } catch (const DeviceError&) {
    if (context.backend == Backend::Cuda)
      throw;
  }
  return false;
}

/// Runs `attempt()`, an optional faster GPU path whose failure only means "take the general
/// one" (STEP's clusters before the GEMM tiles, a shared codebook before each shard's own), and
/// returns true; returns false when it runs out of memory, meets a limit of its own or fails on
/// the device. The general path that follows reports any error that persists.
template <typename Attempt> bool tryOptionalGpuPath(Attempt&& attempt) {
  try {
    std::forward<Attempt>(attempt)();
    return true;
  } catch (const DeviceOutOfMemory&) {
  } catch (const Unsupported&) {
  } catch (const DeviceError&) {
  }
  return false;
}

} // namespace nearscape::gpu

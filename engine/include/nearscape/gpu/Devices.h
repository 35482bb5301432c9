#pragma once
/// @file Devices.h
/// The GPUs the engine may use: what each is, which backend a context resolves to, and the
/// device lists of Context::devices. Answered by the CUDA plugin's runtime (src/gpu/Plugin.h);
/// without a plugin every GPU is "not usable", with the reason.

#include "nearscape/core/Context.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nearscape {

/// What the engine found about CUDA devices.
struct DeviceInfo {
  bool compiledWithCuda = false; ///< built with the CUDA backend
  bool usable = false;           ///< a device answered without error
  std::string name;              ///< the device's name when usable
  std::uint64_t totalMemory = 0; ///< bytes
  std::uint64_t freeMemory = 0;  ///< bytes
  int computeCapability = 0;     ///< e.g. 90
  std::string reason;            ///< why no GPU is used, when !usable
};

/// Queries device `ordinal`. Never throws: any CUDA error means "no GPU" with the reason.
DeviceInfo queryDevice(int ordinal = 0);

/// The backend `context` resolves to (Auto → Cuda when queryDevice says usable).
/// Throws DeviceUnavailable when Cuda is asked for explicitly and is not usable.
Backend resolveBackend(const Context& context);

/// How many CUDA devices the driver shows (0 without the CUDA plugin or a driver). Makes no
/// CUDA context on any of them. Never throws.
int deviceCount();

/// The GPUs `text` names, for `Context::devices`: "all" (every usable GPU; none on a machine
/// without one) or ordinals such as "0,1". Throws InvalidArgument (not such a list, an ordinal
/// repeated, or one with no usable GPU behind it, saying why).
std::vector<int> parseDevices(std::string_view text);

/// "CPU (2 threads)" or the GPU's name, for status bars and JSON.
std::string describeBackend(const Context& context);

} // namespace nearscape

// The device questions (nearscape/gpu/Devices.h), answered by the CUDA plugin's runtime.
#include "nearscape/gpu/Devices.h"

#include "gpu/DeviceRuntime.h"
#include "gpu/Plugin.h"
#include "nearscape/core/Error.h"

#include <charconv>
#include <map>
#include <mutex>

namespace nearscape {

DeviceInfo queryDevice(int ordinal) {
  const gpu::PluginLoad& load = gpu::pluginLoad();
  if (gpu::DeviceRuntime* runtime = load.devices.runtime.device)
    return runtime->queryDevice(ordinal);
  DeviceInfo info;
  info.compiledWithCuda = load.pluginFound; // a CUDA plugin is there but could not load
  info.reason = load.whyNot;
  return info;
}

Backend resolveBackend(const Context& context) {
  if (context.backend == Backend::Cpu)
    return Backend::Cpu;
  const DeviceInfo device = queryDevice(context.device);
  if (device.usable)
    return Backend::Cuda;
  if (context.backend == Backend::Cuda)
    throw DeviceUnavailable("the CUDA backend was asked for but no GPU is usable: " +
                            device.reason);
  return Backend::Cpu;
}

int deviceCount() {
  gpu::DeviceRuntime* runtime = gpu::device<gpu::DeviceRuntime>();
  return runtime ? runtime->deviceCount() : 0;
}

std::vector<int> parseDevices(std::string_view text) {
  std::vector<int> devices;
  if (text == "all") {
    const int count = deviceCount();
    for (int ordinal = 0; ordinal < count; ++ordinal)
      if (queryDevice(ordinal).usable)
        devices.push_back(ordinal);
    return devices;
  }
  std::string_view rest = text;
  while (!rest.empty() || devices.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    int ordinal = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || ordinal < 0)
      throw InvalidArgument("the GPU list must be 'all' or ordinals such as 0,1, not '" +
                            std::string(text) + "'");
    for (int seen : devices)
      if (seen == ordinal)
        throw InvalidArgument("the GPU list names GPU " + std::to_string(ordinal) + " twice");
    devices.push_back(ordinal);
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
    if (rest.empty())
      throw InvalidArgument("the GPU list ends in a comma: '" + std::string(text) + "'");
  }
  for (int ordinal : devices) // the whole list read first: a typo is told before a missing GPU
    if (const DeviceInfo info = queryDevice(ordinal); !info.usable)
      throw InvalidArgument("GPU " + std::to_string(ordinal) + " is not usable: " + info.reason);
  return devices;
}

namespace {

/// queryDevice(ordinal) for a report's device name: a usable device's answer is kept (it goes
/// into every result, a batch-1 search's too, and asking the driver again each time cost tens of
/// microseconds a call); an unusable one's is asked again.
DeviceInfo deviceForReport(int ordinal) {
  static std::mutex mutex;
  static std::map<int, DeviceInfo> usable;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = usable.find(ordinal); it != usable.end())
      return it->second;
  }
  DeviceInfo device = queryDevice(ordinal);
  if (device.usable) {
    const std::lock_guard<std::mutex> lock(mutex);
    usable.emplace(ordinal, device);
  }
  return device;
}

} // namespace

std::string describeBackend(const Context& context) {
  if (context.backend != Backend::Cpu) {
    const DeviceInfo device = deviceForReport(context.device);
    if (device.usable && context.devices.size() > 1) {
      std::string ordinals;
      for (int ordinal : context.devices)
        ordinals += (ordinals.empty() ? "" : ",") + std::to_string(ordinal);
      return std::to_string(context.devices.size()) + " GPUs (" + ordinals + "): " + device.name;
    }
    if (device.usable)
      return "GPU: " + device.name;
    return "CPU (" + std::to_string(effectiveThreads(context)) +
           " threads; no GPU: " + device.reason + ")";
  }
  return "CPU (" + std::to_string(effectiveThreads(context)) + " threads)";
}

} // namespace nearscape

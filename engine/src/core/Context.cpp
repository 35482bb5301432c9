#include "nearscape/core/Context.h"

#include "gpu/GpuBackend.h"
#include "nearscape/core/Error.h"

#include <charconv>
#include <cmath>
#include <thread>

namespace nearscape {

std::string_view backendName(Backend backend) {
  switch (backend) {
  case Backend::Auto:
    return "auto";
  case Backend::Cpu:
    return "cpu";
  case Backend::Cuda:
    return "cuda";
  }
  return "?";
}

std::optional<Backend> parseBackend(std::string_view text) {
  if (text == "auto")
    return Backend::Auto;
  if (text == "cpu")
    return Backend::Cpu;
  if (text == "cuda" || text == "gpu")
    return Backend::Cuda;
  return std::nullopt;
}

std::uint64_t parseByteSize(std::string_view text) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || value < 0 || !std::isfinite(value))
    throw InvalidArgument("not a size: '" + std::string(text) + "' (examples: 512M, 2G, 4096)");
  std::string_view suffix(ptr, end - ptr);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b'))
    suffix.remove_suffix(1);
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I'))
    suffix.remove_suffix(1);
  double scale = 1;
  if (suffix.empty())
    scale = 1;
  else if (suffix.size() == 1) {
    switch (suffix[0]) {
    case 'k':
    case 'K':
      scale = 1024.0;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 't':
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      throw InvalidArgument("unknown size suffix in '" + std::string(text) + "'");
    }
  } else
    throw InvalidArgument("unknown size suffix in '" + std::string(text) + "'");
  const double bytes = value * scale;
  if (bytes > 1.8e19)
    throw InvalidArgument("size too large: '" + std::string(text) + "'");
  return static_cast<std::uint64_t>(bytes);
}

int effectiveThreads(const Context& context) {
  if (context.threads > 0)
    return context.threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

DeviceInfo queryDevice(int ordinal) {
  const gpu::PluginLoad& load = gpu::pluginLoad();
  if (load.backend)
    return load.backend->queryDevice(ordinal);
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

DeviceWarmUp::DeviceWarmUp(const Context& context) {
  if (context.backend == Backend::Cpu)
    return;
  m_thread = std::thread([context] {
    try {
      if (resolveBackend(context) == Backend::Cuda)
        gpu::gpuBackend()->warmUp(context);
    } catch (...) {
      // The work that follows meets the same problem and reports it.
    }
  });
}

DeviceWarmUp::~DeviceWarmUp() {
  if (m_thread.joinable())
    m_thread.join();
}

std::string describeBackend(const Context& context) {
  if (context.backend != Backend::Cpu) {
    const DeviceInfo device = queryDevice(context.device);
    if (device.usable)
      return "GPU: " + device.name;
    return "CPU (" + std::to_string(effectiveThreads(context)) +
           " threads; no GPU: " + device.reason + ")";
  }
  return "CPU (" + std::to_string(effectiveThreads(context)) + " threads)";
}

} // namespace nearscape

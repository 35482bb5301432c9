#include "nearscape/core/Context.h"

#include "gpu/GpuBackend.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

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

namespace {

int hardwareThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

/// The stack each OpenMP thread takes: $OMP_STACKSIZE (or $GOMP_STACKSIZE) as libgomp reads it
/// (a number, kilobytes unless it ends in B, K, M or G), else the threads' default stack.
std::uint64_t openMpStackBytes() {
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"})
    if (const char* text = std::getenv(name); text && *text) {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(text, &end, 10);
      std::uint64_t scale = 1024;
      switch (end && *end ? std::toupper(static_cast<unsigned char>(*end)) : 'K') {
      case 'B':
        scale = 1;
        break;
      case 'M':
        scale = 1024 * 1024;
        break;
      case 'G':
        scale = 1024 * 1024 * 1024;
        break;
      }
      if (value > 0)
        return std::uint64_t(value) * scale;
    }
  std::size_t bytes = 8 << 20;
  if (pthread_attr_t attr; pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &bytes);
    pthread_attr_destroy(&attr);
  }
  return bytes;
}

/// The process's address space in use now (/proc/self/statm); 0 when it cannot be read.
std::uint64_t mappedBytes() {
  unsigned long long pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%llu", &pages) != 1)
      pages = 0;
    std::fclose(statm);
  }
  return std::uint64_t(pages) * std::uint64_t(sysconf(_SC_PAGESIZE));
}

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MB", bytes / (1024.0 * 1024.0));
  return text;
}

ThreadLimit computeThreadLimit() {
  const int hardware = hardwareThreads();
  ThreadLimit limit{kThreadsPerHardwareThread * hardware,
                    std::to_string(kThreadsPerHardwareThread) +
                        " per hardware thread; this machine has " + std::to_string(hardware)};
  if (rlimit space; getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY) {
    // The stacks may take half of what the limit leaves now (the libraries' share is mapped
    // already); the other half is the data's.
    const std::uint64_t stack = std::max<std::uint64_t>(openMpStackBytes(), 64 * 1024);
    const std::uint64_t unused =
        std::uint64_t(space.rlim_cur) - std::min<std::uint64_t>(space.rlim_cur, mappedBytes());
    const std::uint64_t fit = unused / 2 / stack;
    if (fit < std::uint64_t(limit.threads)) {
      limit.threads = std::max(1, int(fit));
      limit.reason = "each thread's stack takes " + megabytes(double(stack)) +
                     ", and the address-space limit (ulimit -v) of " +
                     megabytes(double(space.rlim_cur)) + " leaves " + megabytes(double(unused));
    }
  }
  return limit;
}

} // namespace

ThreadLimit threadLimit() {
  static const ThreadLimit limit = computeThreadLimit();
  return limit;
}

int effectiveThreads(const Context& context) {
  static const int hardware = hardwareThreads();
  const int limit = threadLimit().threads;
  return std::min(context.threads > 0 ? context.threads : hardware, limit);
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

int deviceCount() {
  gpu::GpuBackend* gpu = gpu::gpuBackend();
  return gpu ? gpu->deviceCount() : 0;
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

DeviceWarmUp::DeviceWarmUp(const Context& context) : m_context(context) {
  if (context.backend == Backend::Cpu)
    return;
  logMessage(context, LogLevel::Debug, "device start: begun");
  m_thread = std::thread([context, float16Gemm = m_float16Gemm] {
    try {
      LogLaps lap(context, "device start:");                      // at the log's debug level
      const std::jthread driver([] { gpu::startDriverEarly(); }); // beside the plugin's load
      if (resolveBackend(context) != Backend::Cuda)
        return;
      lap("plugin, driver and context");
      std::vector<std::jthread> others; // the further GPUs of context.devices start at once
      for (std::size_t i = 1; i < context.devices.size(); ++i)
        others.emplace_back([context, float16Gemm, ordinal = context.devices[i]] {
          Context one = context;
          one.device = ordinal;
          try {
            gpu::gpuBackend()->warmUp(one, *float16Gemm);
          } catch (...) {
          }
        });
      try {
        gpu::gpuBackend()->warmUp(context, *float16Gemm);
      } catch (...) {
      }
      for (std::jthread& t : others)
        t.join();
    } catch (...) {
      // The work that follows meets the same problem and reports it.
    }
  });
}

DeviceWarmUp::~DeviceWarmUp() {
  if (!m_thread.joinable())
    return;
  LogLaps lap(m_context, "device start:"); // at the log's debug level
  m_thread.join();
  lap("waited for at the end");
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

// The device's early start (nearscape/gpu/DeviceWarmUp.h).
#include "nearscape/gpu/DeviceWarmUp.h"

#include "gpu/DeviceRuntime.h"
#include "gpu/Plugin.h"
#include "nearscape/core/Log.h"
#include "nearscape/gpu/Devices.h"

#include <vector>

namespace nearscape {

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
      gpu::DeviceRuntime* runtime = gpu::device<gpu::DeviceRuntime>(); // usable: resolved to it
      std::vector<std::jthread> others; // the further GPUs of context.devices start at once
      for (std::size_t i = 1; i < context.devices.size(); ++i)
        others.emplace_back([context, float16Gemm, runtime, ordinal = context.devices[i]] {
          Context one = context;
          one.device = ordinal;
          try {
            runtime->warmUp(one, *float16Gemm);
          } catch (...) {
          }
        });
      try {
        runtime->warmUp(context, *float16Gemm);
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

} // namespace nearscape

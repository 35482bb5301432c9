// The plugin's table (gpu::PluginDevices): one interface a domain, each implemented by its own
// Cuda*.cpp, with the version it was built against. The plugin's only exports are the two C
// entry points below, which gpu/PluginLoader.cpp looks up with dlsym.
#include "cuda/CudaAnalysis.h"
#include "cuda/CudaGraph.h"
#include "cuda/CudaIndex.h"
#include "cuda/CudaKMeans.h"
#include "cuda/CudaKnn.h"
#include "cuda/CudaLayout.h"
#include "cuda/CudaRuntime.h"
#include "gpu/Plugin.h"

namespace nearscape::cuda {
namespace {

template <typename Device> gpu::DeviceSlot<Device> slot(Device& device) {
  return {&device, Device::kVersion};
}

} // namespace
} // namespace nearscape::cuda

#define NEARSCAPE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

/// The table's version this plugin was compiled against (gpu::kPluginAbiVersion).
NEARSCAPE_PLUGIN_EXPORT int nearscape_gpu_plugin_abi() {
  return nearscape::gpu::kPluginAbiVersion;
}

/// The table; the loader calls this only after the version matched.
NEARSCAPE_PLUGIN_EXPORT const nearscape::gpu::PluginDevices* nearscape_gpu_plugin_devices() {
  using namespace nearscape::cuda;
  static const nearscape::gpu::PluginDevices devices{
      slot(runtimeDevice()), slot(knnDevice()),    slot(indexDevice()),   slot(kmeansDevice()),
      slot(graphDevice()),   slot(layoutDevice()), slot(analysisDevice())};
  return &devices;
}

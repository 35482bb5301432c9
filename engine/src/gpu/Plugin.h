#pragma once
// The engine's door to a GPU. Each domain declares the device operations it needs in its own
// interface (knn/KnnDevice.h, index/IndexDevice.h, graph/GraphDevice.h, layout/LayoutDevice.h,
// analysis/AnalysisDevice.h, cluster/KMeansDevice.h, and gpu/DeviceRuntime.h for the device
// itself); the CUDA plugin (engine/src/cuda, built as libnearscape_cuda.so) hands out one table
// of them, PluginDevices. gpu/PluginLoader.cpp loads it on the first GPU question and checks the
// table's version and each interface's, so a program runs on the CPU wherever the plugin, the
// driver or cuBLAS is missing, and a domain whose interface is stale runs on the CPU alone.
// Algorithms reach their interface through device<D>() and choose through onGpuOrCpu<D>()
// (gpu/Dispatch.h). A new GPU algorithm touches its domain's interface and its .cu file only.

#include <map>
#include <string>

namespace nearscape::gpu {

class DeviceRuntime;
class KnnDevice;
class IndexDevice;
class KMeansDevice;
class GraphDevice;
class LayoutDevice;
class AnalysisDevice;

/// One domain's interface in the plugin's table, with the version (its kVersion) the plugin was
/// built against. Null: the plugin offers none.
template <typename Device> struct DeviceSlot {
  Device* device = nullptr;
  int version = 0;
};

/// What the plugin offers, one interface a domain. Laid out by kPluginAbiVersion: a field added,
/// removed or moved bumps it; a change inside one interface bumps only that interface's kVersion.
struct PluginDevices {
  DeviceSlot<DeviceRuntime> runtime;
  DeviceSlot<KnnDevice> knn;
  DeviceSlot<IndexDevice> index;
  DeviceSlot<KMeansDevice> kmeans;
  DeviceSlot<GraphDevice> graph;
  DeviceSlot<LayoutDevice> layout;
  DeviceSlot<AnalysisDevice> analysis;
};

/// Which field of PluginDevices holds interface `Device`, and the domain's name in messages.
template <typename Device> struct DeviceSlotOf;
#define NEARSCAPE_DEVICE_SLOT(Type, field)                                                         \
  template <> struct DeviceSlotOf<Type> {                                                          \
    static constexpr DeviceSlot<Type> PluginDevices::*member = &PluginDevices::field;              \
    static constexpr const char* name = #field;                                                    \
  }
NEARSCAPE_DEVICE_SLOT(DeviceRuntime, runtime);
NEARSCAPE_DEVICE_SLOT(KnnDevice, knn);
NEARSCAPE_DEVICE_SLOT(IndexDevice, index);
NEARSCAPE_DEVICE_SLOT(KMeansDevice, kmeans);
NEARSCAPE_DEVICE_SLOT(GraphDevice, graph);
NEARSCAPE_DEVICE_SLOT(LayoutDevice, layout);
NEARSCAPE_DEVICE_SLOT(AnalysisDevice, analysis);
#undef NEARSCAPE_DEVICE_SLOT

/// What the first GPU question found: the plugin's checked table (a refused interface null), or
/// why not.
struct PluginLoad {
  PluginDevices devices;    ///< `runtime` null: no plugin is usable
  bool pluginFound = false; ///< a plugin file was found (it may still have failed to load)
  std::string pluginPath;   ///< that file
  std::string whyNot;       ///< empty when the plugin is usable
  /// Domains whose interface was refused (a stale version, or none offered), with the reason.
  std::map<std::string, std::string> refused;

  bool usable() const { return devices.runtime.device != nullptr; }
  /// Why interface `name` is null: its own refusal, else the plugin's.
  std::string whyNotFor(const std::string& name) const {
    const auto it = refused.find(name);
    return it != refused.end() ? it->second : whyNot;
  }
};

/// Loads the plugin on the first call (once, thread-safe); later calls return the same answer.
/// The reasons: no plugin ("built without CUDA"), the loader's error (a missing libcuda.so.1 or
/// cuBLAS), a plugin of another table version or a stale runtime. Device problems (no GPU, an
/// old driver) are reported by the runtime's queryDevice instead.
const PluginLoad& pluginLoad();

/// Interface `Device` of the loaded plugin, or null with `whyNot` (gpu::pluginLoad's reason, or
/// the domain's own: "the CUDA plugin's knn interface has version …").
template <typename Device> Device* device(std::string* whyNot = nullptr) {
  const PluginLoad& load = pluginLoad();
  Device* found = (load.devices.*DeviceSlotOf<Device>::member).device;
  if (!found && whyNot)
    *whyNot = load.whyNotFor(DeviceSlotOf<Device>::name);
  return found;
}

/// Initialises the NVIDIA driver (cuInit through libcuda.so.1) where a plugin may be loaded:
/// run beside the plugin's load, whose cuBLAS libraries take as long to map as the driver takes
/// to start (docs/benchmarks.md, session 18), so that the device is ready sooner. Does
/// nothing without a driver; errors are left to the runtime to report.
void startDriverEarly() noexcept;

/// The layout of PluginDevices and of DeviceSlot: bumped whenever they change, so that a stale
/// plugin is refused instead of crashing. (6 was the single GpuBackend interface.)
constexpr int kPluginAbiVersion = 7;
/// The plugin's file name and its two C entry points (no C++ name mangling across the dlopen).
constexpr const char* kPluginFileName = "libnearscape_cuda.so";
constexpr const char* kPluginAbiSymbol = "nearscape_gpu_plugin_abi";
constexpr const char* kPluginDevicesSymbol = "nearscape_gpu_plugin_devices";
using PluginAbiFunction = int (*)();
/// Called only after the ABI version matched. Never null for a usable plugin.
using PluginDevicesFunction = const PluginDevices* (*)();

} // namespace nearscape::gpu

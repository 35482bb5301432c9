// Finds and loads the CUDA plugin (libnearscape_cuda.so) the first time the engine asks for a
// GPU, so that the programs themselves link no CUDA library and start on any machine. Every way
// it can fail becomes the reason shown in the status bar, the About box and `--json`. The
// plugin's table is checked here: its layout's version, then each domain interface's.
#include "gpu/Plugin.h"

#include "analysis/AnalysisDevice.h"
#include "cluster/KMeansDevice.h"
#include "gpu/DeviceRuntime.h"
#include "graph/GraphDevice.h"
#include "index/IndexDevice.h"
#include "knn/KnnDevice.h"
#include "layout/LayoutDevice.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace nearscape::gpu {
namespace {

namespace fs = std::filesystem;

bool isFile(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The folder of the engine library itself (the plugin is installed beside it: lib/nearscape/
/// in the package, engine/ in the build tree, lib/ in a device pack), then the running
/// program's folder and ../lib/nearscape beside it. All relative, so an unpacked package works.
std::vector<fs::path> pluginCandidates() {
  std::vector<fs::path> dirs;
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&pluginLoad), &self) != 0 && self.dli_fname) {
    std::error_code ec;
    const fs::path lib = fs::canonical(self.dli_fname, ec);
    if (!ec)
      dirs.push_back(lib.parent_path());
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path());
    dirs.push_back((exe.parent_path() / ".." / "lib" / "nearscape").lexically_normal());
  }
  std::vector<fs::path> unique;
  for (const fs::path& dir : dirs) {
    bool seen = false;
    for (const fs::path& u : unique)
      seen = seen || u == dir;
    if (!seen)
      unique.push_back(dir);
  }
  return unique;
}

/// Takes `offered` into `load.devices` when the plugin was built against this program's
/// `Device::kVersion`; else leaves it null and records why under the domain's name.
template <typename Device>
void acceptDevice(const DeviceSlot<Device>& offered, const fs::path& path, PluginLoad& load) {
  const char* name = DeviceSlotOf<Device>::name;
  if (!offered.device) {
    load.refused[name] = "the CUDA plugin " + path.string() + " offers no " + name + " interface";
    return;
  }
  if (offered.version != Device::kVersion) {
    load.refused[name] = "the CUDA plugin " + path.string() + " has " + name +
                         " interface version " + std::to_string(offered.version) +
                         ", this program needs " + std::to_string(Device::kVersion) +
                         " (install the plugin of the same build)";
    return;
  }
  load.devices.*DeviceSlotOf<Device>::member = offered;
}

/// dlopen + the table's checks; on failure `load.whyNot` says what went wrong with `path`.
void openPlugin(const fs::path& path, PluginLoad& load) {
  load.pluginFound = true;
  load.pluginPath = path.string();
  // RTLD_LOCAL: the plugin's cuBLAS and cudart stay out of the program's symbol scope.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = ::dlerror();
    load.whyNot = "the CUDA plugin did not load: " + std::string(error ? error : "unknown error");
    return;
  }
  // Kept open on every failure below: unloading code whose initialisers ran is riskier than a
  // leaked handle.
  auto abi = reinterpret_cast<PluginAbiFunction>(::dlsym(handle, kPluginAbiSymbol));
  if (!abi) {
    load.whyNot = path.string() + " is not a Nearscape GPU plugin (no " + kPluginAbiSymbol + ")";
    return;
  }
  // The version first: a plugin of an older table has another factory (6: one GpuBackend).
  if (const int version = abi(); version != kPluginAbiVersion) {
    load.whyNot = "the CUDA plugin " + path.string() + " has interface version " +
                  std::to_string(version) + ", this program needs " +
                  std::to_string(kPluginAbiVersion) + " (install the plugin of the same build)";
    return;
  }
  auto factory = reinterpret_cast<PluginDevicesFunction>(::dlsym(handle, kPluginDevicesSymbol));
  const PluginDevices* offered = factory ? factory() : nullptr;
  if (!offered) {
    load.whyNot = "the CUDA plugin " + path.string() + " offered no devices";
    return;
  }
  acceptDevice(offered->runtime, path, load);
  if (!load.devices.runtime.device) { // no device can be asked anything: no plugin at all
    load.whyNot = load.refused["runtime"];
    return;
  }
  acceptDevice(offered->knn, path, load);
  acceptDevice(offered->index, path, load);
  acceptDevice(offered->kmeans, path, load);
  acceptDevice(offered->graph, path, load);
  acceptDevice(offered->layout, path, load);
  acceptDevice(offered->analysis, path, load);
}

PluginLoad loadPlugin() {
  PluginLoad load;
  if (const char* forced = std::getenv("NEARSCAPE_CUDA_PLUGIN"); forced && *forced) {
    if (!isFile(forced)) {
      load.whyNot = std::string("NEARSCAPE_CUDA_PLUGIN names no file: ") + forced;
      return load;
    }
    openPlugin(forced, load);
    return load;
  }
  const std::vector<fs::path> dirs = pluginCandidates();
  for (const fs::path& dir : dirs)
    if (isFile(dir / kPluginFileName)) {
      openPlugin(dir / kPluginFileName, load);
      return load;
    }
  // The reason cannot tell a CPU-only build from a deleted plugin. It names the engine's folder
  // only, the same for every program of one install, so that their messages agree.
  load.whyNot = std::string("built without CUDA, or its plugin is missing: no ") + kPluginFileName +
                " beside the engine library" +
                (dirs.empty() ? std::string() : " (" + dirs.front().string() + ")") +
                " or the program";
  return load;
}

} // namespace

void startDriverEarly() noexcept {
  try {
    // Only where a plugin would be loaded: a CPU-only install never touches the driver.
    const char* forced = std::getenv("NEARSCAPE_CUDA_PLUGIN");
    bool plugin = forced && *forced && isFile(forced);
    for (const fs::path& dir : pluginCandidates())
      plugin = plugin || (!(forced && *forced) && isFile(dir / kPluginFileName));
    if (!plugin)
      return;
    void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver)
      return; // no driver: the plugin's load says so
    using Init = int (*)(unsigned);
    if (auto init = reinterpret_cast<Init>(::dlsym(driver, "cuInit")))
      init(0); // an error here is the runtime's to report, when it initialises again
    // Not closed: the runtime opens the same library and finds it initialised.
  } catch (...) {
    // Only an early start: the plugin's load follows whatever happens here.
  }
}

const PluginLoad& pluginLoad() {
  static const PluginLoad load = loadPlugin(); // once; C++ makes the first call thread-safe
  return load;
}

} // namespace nearscape::gpu

#include "VersionText.h"

#include "BuildInfo.h"
#include "nearscape/Nearscape.h"

namespace nearscape::app {

const char* buildCommit() {
  return NEARSCAPE_COMMIT;
}

std::string versionText(const std::string& program) {
  std::string text = program + " " + engineVersion() + " (commit " + buildCommit() + ")\n";
  text += "backends: cpu (" + std::to_string(effectiveThreads(Context{})) + " threads, OpenBLAS " +
          blasKernelsName() + " kernels)";
  const DeviceInfo device = queryDevice(0);
  if (device.usable)
    text += ", cuda (" + device.name + ", compute capability " +
            std::to_string(device.computeCapability / 10) + "." +
            std::to_string(device.computeCapability % 10) + ")";
  else
    text += "; cuda unavailable: " + device.reason;
  return text;
}

} // namespace nearscape::app

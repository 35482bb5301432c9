// Row norms on the device or the CPU (nearscape/gpu/Norms.h).
#include "nearscape/gpu/Norms.h"

#include "gpu/DeviceRuntime.h"
#include "gpu/Dispatch.h"
#include "nearscape/core/Norms.h"

namespace nearscape {

std::vector<float> rowNormsSquared(const MatrixView<float>& m, const Context& context) {
  // No CPU fallback: the norms are the start of GPU work; a GPU short of memory says so.
  if (resolveBackend(context) == Backend::Cuda) {
    std::vector<float> out(static_cast<std::size_t>(m.rows));
    gpu::requireDevice<gpu::DeviceRuntime>().rowNormsSquared(m, out.data(), context);
    return out;
  }
  return rowNormsSquaredCpu(m, effectiveThreads(context));
}

} // namespace nearscape

#pragma once
// What the graph layout asks of a GPU: its epochs. The CUDA plugin's CudaLayout implements it
// (cuda/CudaLayout.h); reached through gpu::onGpuOrCpu (gpu/Dispatch.h).

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"

#include <functional>

namespace nearscape::layout {
struct EpochStep;
}

namespace nearscape::gpu {

/// The layout on a GPU; each call runs on device `context.device`.
class LayoutDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes (layout::EpochStep), changes.
  static constexpr int kVersion = 1;
  virtual ~LayoutDevice() = default;

  /// The layout's epochs (layout/LayoutStep.h, the CPU's arithmetic): `positions` (host) are the
  /// start and receive the result; `report(epochs done)` after each epoch, `positions`
  /// refreshed first every `reportEvery`-th epoch and the last. DeviceOutOfMemory leaves
  /// `positions` untouched. Throws DeviceOutOfMemory, Error, Cancelled (between epochs).
  virtual void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate,
                            int reportEvery, float* positions, const Context& context,
                            JobControl& job, const std::function<void(int)>& report) = 0;
};

} // namespace nearscape::gpu

#pragma once
// The plugin's layout (gpu::LayoutDevice): the epochs (GraphLayout.cu); offered to the engine by
// CudaLayout.cpp. Nothing outside engine/src/cuda includes this.

#include "layout/LayoutDevice.h"
#include "nearscape/core/Context.h"

#include <functional>

namespace nearscape::cuda {

/// The layout's epochs (layout/LayoutStep.h, the CPU's arithmetic) on device `context.device`:
/// `step` describes the fuzzy graph and its sampling schedule in host memory; `positions`
/// (nodes × dim, host) are the start and receive the result. After each epoch `report(epochs
/// done)` is called, with `positions` refreshed first on every `reportEvery`-th epoch and the
/// last. Every allocation comes first: DeviceOutOfMemory leaves `positions` untouched.
/// Throws DeviceOutOfMemory, Error, Cancelled (between epochs).
void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate, int reportEvery,
                  float* positions, const Context& context, JobControl& job,
                  const std::function<void(int)>& report);

/// The plugin's gpu::LayoutDevice (one for the process).
gpu::LayoutDevice& layoutDevice();

} // namespace nearscape::cuda

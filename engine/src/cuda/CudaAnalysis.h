#pragma once
// The plugin's analyses (gpu::AnalysisDevice): the near-duplicate searches' tiles (RangeSearch.cu);
// offered to the engine by CudaAnalysis.cpp. Nothing outside engine/src/cuda includes this.

#include "analysis/AnalysisDevice.h"
#include "nearscape/core/Context.h"

#include <memory>

namespace nearscape::cuda {

/// The near-duplicate searches' rows on device `context.device` (gpu::TileSearch): batched
/// float32 GEMMs over tile pairs, proposals within the rounding bound re-checked in float64 on
/// the host. Throws DeviceOutOfMemory, Error.
std::unique_ptr<gpu::TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                const analysis::TilePlan& plan,
                                                const Context& context);

/// The plugin's gpu::AnalysisDevice (one for the process).
gpu::AnalysisDevice& analysisDevice();

} // namespace nearscape::cuda

#pragma once
// What the analyses ask of a GPU: the near-duplicate searches over a tile plan. The CUDA
// plugin's CudaAnalysis implements it (cuda/CudaAnalysis.h); reached through gpu::onGpuOrCpu.

#include "nearscape/analysis/Duplicates.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nearscape::analysis {
struct TilePlan;
}

namespace nearscape::gpu {

/// A tile plan's rows on the device (analysis/TilePlan.h), for the near-duplicate searches.
class TileSearch {
public:
  virtual ~TileSearch() = default;
  /// For each place of the plan's order, the place of the nearest other row of its own tile by
  /// the float32 GEMM (−1 in a tile of one row). Throws DeviceOutOfMemory, Error, Cancelled.
  virtual std::vector<std::int32_t> nearestInTile(JobControl& job) = 0;
  /// Every pair within `threshold` (analysis/Duplicates.h's pairsWithin) over the tile pairs the
  /// plan cannot rule out. Throws InvalidArgument (more than `maxPairs`), DeviceOutOfMemory,
  /// Error, Cancelled.
  virtual NearPairs pairsWithin(double threshold, std::int64_t maxPairs, JobControl& job) = 0;
};

/// The analyses on a GPU; each call runs on device `context.device`.
class AnalysisDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes (analysis::TilePlan), changes.
  static constexpr int kVersion = 1;
  virtual ~AnalysisDevice() = default;

  /// `plan`'s rows uploaded for the all-pairs searches (the caller keeps `data` and `plan`).
  /// Throws DeviceOutOfMemory, Error.
  virtual std::unique_ptr<TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                     const analysis::TilePlan& plan,
                                                     const Context& context) = 0;
};

} // namespace nearscape::gpu

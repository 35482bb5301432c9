#pragma once
// What k-means asks of a GPU: each row's nearest centroids. The CUDA plugin's CudaKMeans
// implements it (cuda/CudaKMeans.h); reached through gpu::onGpuOrCpu (gpu/Dispatch.h).

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <vector>

namespace nearscape::gpu {

/// k-means on a GPU; each call runs on device `context.device`, host memory in and out.
class KMeansDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes, changes.
  static constexpr int kVersion = 1;
  virtual ~KMeansDevice() = default;

  /// nearestCentroids (index/KMeans.h): the `count` nearest of `centroids` to each row of
  /// `data`, ties to the smaller centroid. Throws DeviceOutOfMemory, Error.
  virtual std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                                     const MatrixView<float>& centroids, int count,
                                                     Metric metric, const Context& context) = 0;
};

} // namespace nearscape::gpu

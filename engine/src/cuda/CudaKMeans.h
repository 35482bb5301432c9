#pragma once
// The plugin's k-means (gpu::KMeansDevice): nearest centroids (Ivf.cu, NearestCentroid.cuh);
// offered to the engine by CudaKMeans.cpp. Nothing outside engine/src/cuda includes this.

#include "cluster/KMeansDevice.h"
#include "nearscape/core/Context.h"

#include <cstdint>
#include <vector>

namespace nearscape::cuda {

/// nearestCentroids (index/KMeans.h) on device `context.device`: a float32 cuBLAS GEMM per tile
/// of rows, then a warp argmin (count 1) or a block radix select per row; ties to the smaller
/// centroid. Throws DeviceOutOfMemory, Error.
std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                           const MatrixView<float>& centroids, int count,
                                           Metric metric, const Context& context);

/// The plugin's gpu::KMeansDevice (one for the process).
gpu::KMeansDevice& kmeansDevice();

} // namespace nearscape::cuda

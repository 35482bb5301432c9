#pragma once
// Direct exact scans on the device for a few query rows: the GPU twin of knn::directRows. The
// rows a float16 pass leaves unresolved (a handful of 10,000 on manifold 1M × 128) are scored
// against every base row here rather than by a 3xTF32 pass, which re-packs the whole base and
// needs cuBLAS (whose start, in a cold process, the search then waits for).

#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace nearscape::cuda {

/// Device bytes directRowsOnDevice takes per (row, base row) pair: float64 keys and int32 ids,
/// each with a second buffer for the sort (whose own scratch is small beside them).
constexpr std::uint64_t kDirectPairBytes = 2 * (sizeof(double) + sizeof(std::int32_t));

/// For each query row i of `rows`: every base row's exact float64 distance (warpExactDistance,
/// `skipOf(i)` left out), and the k best by (distance, id) written to outIds/outDist + i · k.
/// `base` is the raw float32 base on the current device (nb × d). Takes about rows × nb ×
/// kDirectPairBytes of device memory (throws DeviceOutOfMemory when short; Unsupported for a base
/// beyond 2^31 rows). A radix sort a row: meant for a few rows. Synchronous.
void directRowsOnDevice(const float* base, std::int64_t nb, int d, const MatrixView<float>& queries,
                        const std::vector<std::int64_t>& rows, Metric metric, int k,
                        const std::function<std::int64_t(std::int64_t)>& skipOf,
                        std::int32_t* outIds, float* outDist, cudaStream_t stream);

} // namespace nearscape::cuda

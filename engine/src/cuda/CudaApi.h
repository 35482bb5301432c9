#pragma once
// The engine's internal door to its CUDA code: plain C++ declarations, so .cpp files and the UI
// never include a CUDA header. Defined in engine/src/cuda/*.cu; only used when
// NEARSCAPE_WITH_CUDA is defined.

#include "nearscape/core/Context.h"
#include "nearscape/knn/Knn.h"

#include <cstdint>

namespace nearscape::cuda {

/// Never throws: any CUDA error means "not usable", with the error's text as the reason.
DeviceInfo queryDevice(int ordinal);

/// out[i] = ‖row i‖² for a host n × d matrix, computed on device `ordinal`.
/// Throws DeviceOutOfMemory, Error on any other CUDA failure.
void rowNormsSquared(const float* hostData, std::int64_t n, std::int64_t d, float* hostOut,
                     int ordinal);

/// Exact kNN on device `context.device` (knn/Knn.h semantics; `excludeSelf` for graphs).
/// Throws DeviceOutOfMemory when even small tiles do not fit, InvalidArgument for k too large
/// for the GPU path, Cancelled, Error on other CUDA failures.
KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params);

} // namespace nearscape::cuda

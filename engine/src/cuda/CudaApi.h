#pragma once
// The engine's internal door to its CUDA code: plain C++ declarations, so .cpp files and the UI
// never include a CUDA header. Defined in engine/src/cuda/*.cu; only used when
// NEARSCAPE_WITH_CUDA is defined.

#include "nearscape/core/Context.h"
#include "nearscape/knn/Knn.h"

#include <cstdint>
#include <memory>

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

/// A base kept on the device for single-query exact searches of any k (ExactKnnIndex's CUDA side).
class ResidentBase {
public:
  /// Uploads and packs `base`. Throws DeviceOutOfMemory, Error.
  ResidentBase(const MatrixView<float>& base, Metric metric, const Context& context);
  ~ResidentBase();
  ResidentBase(const ResidentBase&) = delete;
  ResidentBase& operator=(const ResidentBase&) = delete;
  /// The k nearest rows for each query, one query at a time. Throws Error, Cancelled.
  KnnResult search(const MatrixView<float>& queries, int k, JobControl& job) const;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace nearscape::cuda

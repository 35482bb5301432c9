// The plugin's gpu::KMeansDevice: forwards to Ivf.cu's nearest centroids.
#include "cuda/CudaKMeans.h"

namespace nearscape::cuda {
namespace {

class CudaKMeans final : public gpu::KMeansDevice {
public:
  std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                             const MatrixView<float>& centroids, int count,
                                             Metric metric, const Context& context) override {
    return cuda::nearestCentroids(data, centroids, count, metric, context);
  }
};

} // namespace

gpu::KMeansDevice& kmeansDevice() {
  static CudaKMeans kmeans;
  return kmeans;
}

} // namespace nearscape::cuda

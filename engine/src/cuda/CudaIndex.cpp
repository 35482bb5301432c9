// The plugin's gpu::IndexDevice: each method forwards to the CUDA code of this folder.
#include "cuda/CudaIndex.h"

namespace nearscape::cuda {
namespace {

class CudaIndex final : public gpu::IndexDevice {
public:
  std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                           const Context& context) override {
    return cuda::pruneByDetours(knn, degree, context);
  }

  std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                                const Context& context) override {
    return cuda::optimiseSearchGraph(knn, degree, context);
  }

  std::unique_ptr<gpu::GraphSearcher>
  makeGraphSearcher(const MatrixView<float>& vectors, const std::int32_t* graph, int degree,
                    const std::int32_t* sample, const std::int32_t* upper, int count, Metric metric,
                    const Context& context) override {
    return std::make_unique<DeviceGraphSearch>(vectors, graph, degree, sample, upper, count, metric,
                                               context);
  }

  std::unique_ptr<gpu::IvfSearcher> makeIvfSearcher(const MatrixView<float>& centroids,
                                                    const std::int64_t* offsets,
                                                    const std::int32_t* ids,
                                                    const MatrixView<float>& vectors, Metric metric,
                                                    const Context& context) override {
    return std::make_unique<DeviceIvfFlat>(centroids, offsets, ids, vectors, metric, context);
  }
};

} // namespace

gpu::IndexDevice& indexDevice() {
  static CudaIndex index;
  return index;
}

} // namespace nearscape::cuda

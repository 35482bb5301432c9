// The plugin's gpu::KnnDevice: each method forwards to the CUDA code of this folder.
#include "cuda/CudaKnn.h"

namespace nearscape::cuda {
namespace {

class CudaKnn final : public gpu::KnnDevice {
public:
  KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                        Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                        const ExactKnnParams& params) override {
    return cuda::exactSearch(queries, base, k, metric, excludeSelf, context, job, params);
  }

  std::optional<KnnResult> stepSearch(const MatrixView<float>& queries,
                                      const MatrixView<float>& base, int k, bool excludeSelf,
                                      const Context& context, JobControl& job,
                                      double maxScoredShare) override {
    return cuda::stepSearch(queries, base, k, excludeSelf, context, job, maxScoredShare);
  }

  std::optional<gpu::PairsShare> pairsShare(const MatrixView<float>& data, int k, Metric metric,
                                            int part, int parts, const Context& context,
                                            JobControl& job, const ExactKnnParams& params,
                                            knn::PairsExchange* exchange) override {
    return cuda::pairsShare(data, k, metric, part, parts, context, job, params, exchange);
  }

  std::unique_ptr<gpu::ClusterIndex> makeClusterIndex(const MatrixView<float>& base,
                                                      const Context& context) override {
    return std::make_unique<DeviceClusters>(base, context);
  }

  std::unique_ptr<gpu::ResidentIndex>
  makeResidentIndex(const MatrixView<float>& base, Metric metric, const Context& context) override {
    return std::make_unique<ResidentBase>(base, metric, context);
  }

  KnnResult gnndGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                      JobControl& job, const NnDescentParams& params,
                      const NnDescentProgress& progress, bool headStart,
                      const gpu::GnndWarmStart& warm, const gpu::GnndClusters& clusters) override {
    return cuda::gnndGraph(data, k, metric, context, job, params, progress, headStart, warm,
                           clusters);
  }

  std::vector<float> gnndCodebook(const MatrixView<float>& sample, Metric metric, int count,
                                  const Context& context) override {
    return cuda::gnndCodebook(sample, metric, count, context);
  }
};

} // namespace

gpu::KnnDevice& knnDevice() {
  static CudaKnn knn;
  return knn;
}

} // namespace nearscape::cuda

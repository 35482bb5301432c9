// The CUDA backend offered to the engine through the gpu::GpuBackend interface: each method
// forwards to the CUDA code of this folder. The plugin's only exports are the two C entry points
// at the end, which gpu/PluginLoader.cpp looks up with dlsym.
#include "cuda/CudaApi.h"
#include "layout/LayoutStep.h"

#include <cuda_runtime.h>

namespace nearscape::cuda {
namespace {

class CudaBackend final : public gpu::GpuBackend {
public:
  void warmUp(const Context& context, const std::atomic<bool>& float16Gemm) override {
    cuda::warmUp(context, float16Gemm);
  }

  DeviceInfo queryDevice(int ordinal) override {
    DeviceInfo info = cuda::queryDevice(ordinal);
    info.compiledWithCuda = true;
    return info;
  }

  void rowNormsSquared(const MatrixView<float>& m, float* out, const Context& context) override {
    cuda::rowNormsSquared(m.data, m.rows, m.cols, out, context.device);
  }

  int deviceCount() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return count;
  }

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

  std::unique_ptr<gpu::TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                  const analysis::TilePlan& plan,
                                                  const Context& context) override {
    return cuda::makeTileSearch(data, plan, context);
  }

  gpu::DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context,
                                  JobControl& job) override {
    return cuda::boruvkaForest(graph, context, job);
  }

  std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                           const Context& context) override {
    return cuda::pruneByDetours(knn, degree, context);
  }

  std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                                const Context& context) override {
    return cuda::optimiseSearchGraph(knn, degree, context);
  }

  void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate, int reportEvery,
                    float* positions, const Context& context, JobControl& job,
                    const std::function<void(int)>& report) override {
    cuda::layoutEpochs(step, epochs, learningRate, reportEvery, positions, context, job, report);
  }

  std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                             const MatrixView<float>& centroids, int count,
                                             Metric metric, const Context& context) override {
    return cuda::nearestCentroids(data, centroids, count, metric, context);
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
} // namespace nearscape::cuda

#define NEARSCAPE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

/// The interface version this plugin was compiled against (gpu::kPluginAbiVersion).
NEARSCAPE_PLUGIN_EXPORT int nearscape_gpu_plugin_abi() {
  return nearscape::gpu::kPluginAbiVersion;
}

/// The backend; the loader calls this only after the version matched.
NEARSCAPE_PLUGIN_EXPORT nearscape::gpu::GpuBackend* nearscape_gpu_backend_v1() {
  static nearscape::cuda::CudaBackend backend;
  return &backend;
}

// One piece of NN-Descent on the GPU or the CPU (DescendPiece.h).
#include "knn/DescendPiece.h"

#include "gpu/Dispatch.h"
#include "knn/NnDescentCpu.h"

#include <string>
#include <vector>

namespace nearscape::knn {

/// GNND on the GPU where there is one (with `initial`: GGM's merge of the parts split at
/// `split`), else — or when the GPU lacks the memory or the limits (k, d) and the backend was not
/// forced — the CPU's NN-Descent. Builds and merges both take a k-means head start on the device
/// (about 1,000 items a cluster): first neighbours, and a merge's first candidates in the other
/// part, come from the item's own cluster; random ones take as many iterations as a new build.
KnnResult descendPiece(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress, const MatrixView<std::int32_t>* initial,
                       std::int64_t split, const MatrixView<float>* second,
                       const gpu::GnndClusters& clusters, const std::function<void()>& uploaded) {
  const std::int64_t n = data.rows + (second ? second->rows : 0);
  std::string fallback;
  KnnResult result = gpu::onGpuOrCpu<gpu::KnnDevice>(
      context,
      [&](gpu::KnnDevice& gpu) {
        return gpu.gnndGraph(data, k, metric, context, job, params, progress, n >= 4096,
                             {initial, split, second, uploaded}, clusters);
      },
      [&] {
        if (second) { // the CPU's NN-Descent reads one block
          std::vector<float> joined(data.data, data.data + data.size());
          joined.insert(joined.end(), second->data, second->data + second->size());
          return nnDescentCpu({joined.data(), n, data.cols}, k, metric, context, job, params,
                              progress, initial, split);
        }
        return nnDescentCpu(data, k, metric, context, job, params, progress, initial, split);
      },
      &fallback);
  if (!fallback.empty())
    result.report.fallback = fallback;
  return result;
}

} // namespace nearscape::knn

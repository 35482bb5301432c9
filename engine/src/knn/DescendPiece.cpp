// One piece of NN-Descent on the GPU or the CPU (DescendPiece.h).
#include "knn/DescendPiece.h"

#include "gpu/Dispatch.h"
#include "knn/NnDescentCpu.h"
#include "nearscape/core/Error.h"

#include <algorithm>
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

PairLists pairStartingLists(const MatrixView<std::int32_t>& first,
                            const MatrixView<std::int32_t>& second, int threads) {
  const std::int64_t split = first.rows, n = first.rows + second.rows;
  PairLists lists;
  lists.width = std::max(first.cols, second.cols);
  lists.ids.assign(std::size_t(n * lists.width), -1);
  std::int64_t outside = 0; // ids beyond their graph's rows: counted, then refused
#pragma omp parallel for reduction(+ : outside) schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) {
    const bool inFirst = i < split;
    const std::int32_t* row = inFirst ? first.row(i) : second.row(i - split);
    const std::int64_t cols = inFirst ? first.cols : second.cols;
    const std::int64_t limit = inFirst ? split : n - split;
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int32_t j = row[c];
      outside += j >= limit ? 1 : 0;
      lists.ids[std::size_t(i * lists.width + c)] =
          j < 0 ? -1 : std::int32_t(inFirst ? j : j + split);
    }
  }
  NEARSCAPE_EXPECTS(outside == 0,
                    std::to_string(outside) + " id(s) of the two graphs lie outside their part");
  return lists;
}

} // namespace nearscape::knn

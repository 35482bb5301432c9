// The public entries of NN-Descent and of the choice between it and the exact graph
// (nearscape/knn/NnDescent.h); the work is done by knn/DescendPiece (one piece, GPU or CPU),
// knn/ShardedGraph (GNND §5's shards) and knn/NnDescentCpu.
#include "nearscape/knn/NnDescent.h"

#include "knn/DescendPiece.h"
#include "knn/ExactCommon.h"
#include "knn/NnDescentCpu.h"
#include "knn/ShardedGraph.h"
#include "knn/Step.h"
#include "nearscape/core/Error.h"
#include "nearscape/gpu/Devices.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace nearscape {

std::string_view graphMethodName(GraphMethod method) {
  switch (method) {
  case GraphMethod::Exact:
    return "exact";
  case GraphMethod::NnDescent:
    return "nndescent";
  case GraphMethod::Auto:
    break;
  }
  return "auto";
}

std::optional<GraphMethod> parseGraphMethod(std::string_view text) {
  for (GraphMethod m : {GraphMethod::Auto, GraphMethod::Exact, GraphMethod::NnDescent})
    if (text == graphMethodName(m))
      return m;
  return std::nullopt;
}

namespace {
/// `auto` takes STEP's exact graph over GNND where each row scores at most this share of the
/// data (see clusteredGraphIfCheap and docs/benchmarks.md).
constexpr double kAutoClusteredShare = 0.02;

/// Up to how many items the GPU's exact graph (k = 10) beats GNND, by dimension: measured on
/// manifold data of 30,000–500,000 items (docs/benchmarks.md, 2026-11-25 session 18, H100: the
/// paired exact sweeps and GNND's cluster seeds), interpolated log-log between the measured
/// dimensions.
double gpuExactCrossover(std::int64_t d) {
  constexpr double kDims[] = {64, 128, 256, 768};
  constexpr double kItems[] = {30000, 50000, 220000, 650000};
  if (d <= kDims[0])
    return kItems[0];
  const int i = d <= kDims[1] ? 0 : d <= kDims[2] ? 1 : 2;
  const double slope = std::log(kItems[i + 1] / kItems[i]) / std::log(kDims[i + 1] / kDims[i]);
  return kItems[i] * std::pow(double(d) / kDims[i], slope);
}

/// Auto decided from the shape on `backend` (resolveGraphMethod's rule).
GraphMethod cheaperMethod(std::int64_t n, std::int64_t d, int k, Backend backend) {
  bool exactIsCheaper = false;
  if (backend == Backend::Cuda) {
    // GNND's limits (k ≤ 64, d ≤ 800) leave the exact graph; GNND's time grows about as k^1.5
    // (manifold 1M: k = 32 takes 4× k = 10) while the exact graph's hardly moves — with the
    // fused kernel, hardly at all: at k = 32 it beats GNND up to about 1.5M items (d = 128:
    // 1.41 against 1.78 s at 1M, 4.43 against 3.85 s at 2M), (k / 10)^2.9 times the k = 10
    // crossover (measured to k = 32; beyond it, 1.5 as before).
    const double kFactor =
        std::pow(std::max(1.0, double(k) / 10.0), knn::gpuFusedTiles(d, k) && k <= 32 ? 2.9 : 1.5);
    exactIsCheaper = k > 64 || d > 800 || double(n) <= gpuExactCrossover(d) * kFactor;
  } else {
    exactIsCheaper = double(n) * double(n) * double(d) <= 12000.0 * 12000.0 * 784.0;
  }
  return exactIsCheaper ? GraphMethod::Exact : GraphMethod::NnDescent;
}

/// NN-Descent's graph of checked data on `backend` (resolved at the public entry): in shards
/// beyond the memory budget, else one piece.
KnnResult descendWhole(const MatrixView<float>& data, int k, Metric metric, Backend backend,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress) {
  if (knn::buildsInShards(data.rows, data.cols, k, context, params.listSize))
    return knn::shardedGraph(data, k, metric, backend, context, job, params, progress);
  return knn::descendPiece(data, k, metric, context, job, params, progress, nullptr, 0);
}

} // namespace

GraphPlan planKnnGraph(GraphMethod method, std::int64_t n, std::int64_t d, int k,
                       const Context& context) {
  GraphPlan plan;
  plan.backend = resolveBackend(context); // the one place a graph's backend is resolved
  plan.automatic = method == GraphMethod::Auto;
  plan.method = plan.automatic ? cheaperMethod(n, d, k, plan.backend) : method;
  return plan;
}

GraphMethod resolveGraphMethod(GraphMethod method, std::int64_t n, std::int64_t d, int k,
                               const Context& context) {
  if (method != GraphMethod::Auto) // as given, without asking for a device
    return method;
  return planKnnGraph(method, n, d, k, context).method;
}

GraphMethod graphBuiltBy(const KnnResult& graph) {
  return graph.report.exact() ? GraphMethod::Exact : GraphMethod::NnDescent;
}

KnnResult buildKnnGraph(const MatrixView<float>& data, int k, Metric metric, GraphMethod method,
                        const Context& context, JobControl& job, const NnDescentParams& params,
                        const NnDescentProgress& progress) {
  // A method given is its own public entry's, which checks the data before it asks for a
  // device; Auto needs the backend to decide.
  switch (method) {
  case GraphMethod::Exact:
    return knnGraph(data, k, metric, context, job);
  case GraphMethod::NnDescent:
    return nnDescentGraph(data, k, metric, context, job, params, progress);
  case GraphMethod::Auto:
    break;
  }
  return buildKnnGraph(data, k, metric, planKnnGraph(method, data.rows, data.cols, k, context),
                       context, job, params, progress);
}

KnnResult buildKnnGraph(const MatrixView<float>& data, int k, Metric metric, const GraphPlan& plan,
                        const Context& context, JobControl& job, const NnDescentParams& params,
                        const NnDescentProgress& progress) {
  if (plan.method == GraphMethod::Exact)
    return knnGraph(data, k, metric, context, job);
  // Clustered data (blobs): STEP's clusters give the exact graph sooner than GNND gives an
  // approximate one, and a probe of a few clusters tells, before the work, whether they prune.
  if (plan.automatic)
    if (auto exact = knn::clusteredGraphIfCheap(data, k, metric, plan.backend, context, job,
                                                kAutoClusteredShare))
      return std::move(*exact);
  knn::validateGraphInput(data, k);
  return descendWhole(data, k, metric, plan.backend, context, job, params, progress);
}

KnnResult nnDescentGraph(const MatrixView<float>& data, int k, Metric metric,
                         const Context& context, JobControl& job, const NnDescentParams& params,
                         const NnDescentProgress& progress) {
  knn::validateGraphInput(data, k);
  const GraphPlan plan = planKnnGraph(GraphMethod::NnDescent, data.rows, data.cols, k, context);
  return descendWhole(data, k, metric, plan.backend, context, job, params, progress);
}

KnnResult mergeKnnGraphs(const MatrixView<float>& data, std::int64_t split,
                         const MatrixView<std::int32_t>& first,
                         const MatrixView<std::int32_t>& second, int k, Metric metric,
                         const Context& context, JobControl& job, const NnDescentParams& params,
                         const NnDescentProgress& progress) {
  NEARSCAPE_EXPECTS(split > 0 && split < data.rows, "the split must lie inside the data");
  NEARSCAPE_EXPECTS(first.rows == split && second.rows == data.rows - split,
                    "the two graphs must cover rows [0, split) and [split, n)");
  const knn::PairLists lists = knn::pairStartingLists(first, second, effectiveThreads(context));
  const MatrixView<std::int32_t> initial = lists.view();
  return knn::descendPiece(data, k, metric, context, job, params, progress, &initial, split);
}

} // namespace nearscape

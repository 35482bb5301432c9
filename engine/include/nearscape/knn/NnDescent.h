#pragma once
/// @file NnDescent.h
/// Approximate kNN graphs by NN-Descent (Dong, Moses & Li 2011) with the NEW/OLD sampling of
/// GNND §4.1–4.3: a neighbour of a neighbour
/// is likely a neighbour, so each node's lists are refined by joining its sampled neighbours.

#include "nearscape/knn/Knn.h"

#include <optional>
#include <string_view>

namespace nearscape {

struct NnDescentParams {
  int sampleSize = 0; ///< NEW/OLD samples per node and iteration; 0 = 2k
  /// Upper bound on iterations; `delta` ends them first (GPU, manifold data: 1M × 128 after 14,
  /// 10M × 96 after 18 — a bound of 12 stopped those at recall 0.992 and 0.837).
  int maxIterations = 30;
  double delta = 0.001; ///< stop when fewer than delta · n · k entries changed in an iteration
  /// false (GPU): the lists' own order and float32 working distances, not re-checked in float64
  /// — for shards and partial merges whose ids only feed the next merge.
  bool exactFinish = true;
  /// GPU: iterations of a GGM merge at most (it starts from two finished graphs and cross
  /// candidates from its rows' clusters; manifold 10M × 96 in 4 shards: 4 reach recall 0.937,
  /// 5 reach 0.993, 6 reach 0.996 at a little more time — docs/benchmarks.md).
  int mergeIterations = 5;
  /// GPU (GNND): the working lists' length, k ≤ length ≤ 64; 0 = 2k, at most 32. Longer lists
  /// reach further on data whose neighbourhoods are nearly equidistant (high-dimensional blobs).
  int listSize = 0;
  /// GPU (GNND), a build with its k-means head start: once the lists converge, each item's
  /// nearest among the members of its cluster and of the nearest other cluster (exact within
  /// them) are proposed, and the descent goes on to spread them. On blobs 1M × 128 the descent
  /// alone stalls at recall 0.93 (docs/benchmarks.md).
  bool clusterSeeds = true;
};

/// Bytes of NN-Descent's working memory per item of d dimensions and k neighbours, with lists of
/// `listSize` (NnDescentParams::listSize; 0: the default's 2k).
std::uint64_t nnDescentBytesPerItem(std::int64_t d, int k, int listSize = 0);

/// Called after each iteration with its number and the share of entries it changed.
using NnDescentProgress = std::function<void(int iteration, double updateRate)>;

/// The approximate kNN graph (itself excluded; k ≤ n − 1): ids nearest first; each reported
/// distance is the exact float64 distance of its id. Deterministic for a seed (context.seed)
/// whatever the thread count on the CPU; on CUDA (GNND) not bitwise. When n items' working memory
/// (nnDescentBytesPerItem) exceeds context.memoryBudget, shards of half the budget are built one
/// at a time and every pair of them merged by GGM, the best k of each row kept in host memory
/// (the result's `device` says how many shards). Throws InvalidArgument (k out of range, n < 2,
/// NaN/Inf), Cancelled (checked between chunks of nodes).
KnnResult nnDescentGraph(const MatrixView<float>& data, int k, Metric metric,
                         const Context& context, JobControl& job = noJobControl(),
                         const NnDescentParams& params = {},
                         const NnDescentProgress& progress = {});

/// How a kNN graph is built: exact (knnGraph), NN-Descent (nnDescentGraph; GNND on a GPU), or
/// Auto — the cheaper of the two for the data's shape on the backend that runs it.
enum class GraphMethod { Auto, Exact, NnDescent };

/// "auto", "exact", "nndescent".
std::string_view graphMethodName(GraphMethod method);
/// The method named by `text` ("auto", "exact", "nndescent"), or nothing.
std::optional<GraphMethod> parseGraphMethod(std::string_view text);

/// How a kNN graph is to be built, decided once at a public entry (planKnnGraph) and passed down
/// as a value, so that the backend is resolved once for the whole build.
struct GraphPlan {
  GraphMethod method = GraphMethod::Exact; ///< Exact or NnDescent, never Auto
  Backend backend = Backend::Cpu;          ///< the backend `context` resolves to, never Auto
  /// Auto was asked: on a GPU buildKnnGraph may still take STEP's exact graph where `method`
  /// says NN-Descent (clustered data).
  bool automatic = false;
};

/// The plan for the graph of n × d items and k neighbours on `context`: the backend it resolves
/// to, and `method` with Auto decided as resolveGraphMethod says. Throws DeviceUnavailable as
/// resolveBackend.
GraphPlan planKnnGraph(GraphMethod method, std::int64_t n, std::int64_t d, int k,
                       const Context& context);

/// The method that builds the graph of n × d items and k neighbours on `context`'s backend: the
/// one place where Auto is decided from the shape, by the crossovers measured (docs/benchmarks.md).
/// Exact when it is the cheaper way — CPU, 2 cores: when n²·d ≤ 12,000² · 784 (fashion-mnist
/// subsets: exact is sooner at 10,000 items, NN-Descent at 20,000). GPU
/// (H100, a sweep over d = 64–768 and n = 30,000–2M): when n is below a crossover that grows with
/// d (30,000 items up to d = 64, 50,000 at 128, 220,000 at 256, 650,000 at 768) and with k (as
/// (k/10)^2.9 where the fused exact kernel applies, (k/10)^1.5 elsewhere), and beyond GNND's
/// limits (k > 64, d > 800). GNND's recall stayed ≥ 0.996 in that sweep (k = 10 and 32).
/// buildKnnGraph may still take STEP's exact graph where this says NN-Descent. Exact and NnDescent
/// are returned as they are. Throws DeviceUnavailable as resolveBackend.
GraphMethod resolveGraphMethod(GraphMethod method, std::int64_t n, std::int64_t d, int k,
                               const Context& context);

/// The kNN graph of `data` by `method`; `params` and `progress` apply to NN-Descent. Auto is
/// resolveGraphMethod's choice, except where that is NN-Descent on a GPU and STEP's clusters
/// prune the data (clustered data, e.g. blobs): a probe on a seeded sample, then one on the data,
/// tell before the work, and the exact graph comes sooner than GNND's (graphBuiltBy says which
/// ran). Throws as knnGraph and nnDescentGraph.
KnnResult buildKnnGraph(const MatrixView<float>& data, int k, Metric metric, GraphMethod method,
                        const Context& context, JobControl& job = noJobControl(),
                        const NnDescentParams& params = {}, const NnDescentProgress& progress = {});

/// buildKnnGraph by a plan made before (planKnnGraph on the same data, k and context): the
/// backend is not resolved again. Throws as knnGraph and nnDescentGraph.
KnnResult buildKnnGraph(const MatrixView<float>& data, int k, Metric metric, const GraphPlan& plan,
                        const Context& context, JobControl& job = noJobControl(),
                        const NnDescentParams& params = {}, const NnDescentProgress& progress = {});

/// How `graph` was built: Exact for an exact result (the GEMM tiles, STEP, a resident base),
/// NnDescent for NN-Descent, GNND and GGM merges (from its report's method).
GraphMethod graphBuiltBy(const KnnResult& graph);

/// buildKnnGraph with GraphMethod::Auto.
inline KnnResult autoKnnGraph(const MatrixView<float>& data, int k, Metric metric,
                              const Context& context, JobControl& job = noJobControl()) {
  return buildKnnGraph(data, k, metric, GraphMethod::Auto, context, job);
}

/// GGM (GNND §5.1): the graph of S1 ∪ S2 from the graphs of S1 = rows [0, split) and
/// S2 = rows [split, n) of `data`. `first` holds ids in [0, split); `second` ids local to S2
/// (0 is row `split`). For data beyond memory (shards built one at a time, merged pairwise) and
/// for adding items to an existing graph. Throws as nnDescentGraph.
KnnResult mergeKnnGraphs(const MatrixView<float>& data, std::int64_t split,
                         const MatrixView<std::int32_t>& first,
                         const MatrixView<std::int32_t>& second, int k, Metric metric,
                         const Context& context, JobControl& job = noJobControl(),
                         const NnDescentParams& params = {},
                         const NnDescentProgress& progress = {});

} // namespace nearscape

#pragma once
/// @file NnDescent.h
/// Approximate kNN graphs by NN-Descent (Dong, Moses & Li 2011) with the NEW/OLD sampling of
/// GNND (../shared/papers/gnnd-knn-graph-construction-on-gpu.txt §3): a neighbour of a neighbour
/// is likely a neighbour, so each node's lists are refined by joining its sampled neighbours.

#include "nearscape/knn/Knn.h"

namespace nearscape {

struct NnDescentParams {
  int sampleSize = 0;       ///< NEW/OLD samples per node and iteration; 0 = 2k
  int maxIterations = 12;   ///< upper bound on iterations
  double delta = 0.001;     ///< stop when fewer than delta · n · k entries changed in an iteration
};

/// Called after each iteration with its number and the share of entries it changed.
using NnDescentProgress = std::function<void(int iteration, double updateRate)>;

/// The approximate kNN graph (itself excluded; k ≤ n − 1): ids nearest first; each reported
/// distance is the exact float64 distance of its id. Deterministic for a seed (context.seed)
/// whatever the thread count. Throws InvalidArgument (k out of range, n < 2, NaN/Inf),
/// Cancelled (checked between chunks of nodes).
KnnResult nnDescentGraph(const MatrixView<float>& data, int k, Metric metric,
                         const Context& context, JobControl& job = noJobControl(),
                         const NnDescentParams& params = {},
                         const NnDescentProgress& progress = {});

/// `method = auto`: true when the exact graph is the cheaper way to a kNN graph of n × d items on
/// `backend`. On the GPU (until GNND lands) always; on the CPU when n²·d ≤ 12,000² · 784, the
/// crossover measured on fashion-mnist subsets on 2 cores (docs/benchmarks.md: exact 0.94 s vs
/// NN-Descent 1.13 s at 10,000 items; 3.6 s vs 1.9 s at 20,000).
bool exactGraphIsCheaper(std::int64_t n, std::int64_t d, Backend backend);

/// GGM (GNND §5.1): the graph of S1 ∪ S2 from the graphs of S1 = rows [0, split) and
/// S2 = rows [split, n) of `data`. `first` holds ids in [0, split); `second` ids local to S2
/// (0 is row `split`). For data beyond memory (shards built one at a time, merged pairwise) and
/// for adding items to an existing graph. Throws as nnDescentGraph.
KnnResult mergeKnnGraphs(const MatrixView<float>& data, std::int64_t split,
                         const MatrixView<std::int32_t>& first, const MatrixView<std::int32_t>& second,
                         int k, Metric metric, const Context& context,
                         JobControl& job = noJobControl(), const NnDescentParams& params = {},
                         const NnDescentProgress& progress = {});

} // namespace nearscape

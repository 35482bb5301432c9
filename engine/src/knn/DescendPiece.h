#pragma once
// One piece of NN-Descent (internal): a whole graph, a shard of one, or GGM's merge of two, on
// the GPU (GNND) where there is one, else on the CPU. nnDescentGraph, mergeKnnGraphs and the
// shards of shardedGraph (knn/ShardedGraph.h) all build through it.

#include "knn/KnnDevice.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace nearscape::knn {

/// GNND on the GPU where there is one, else the CPU's NN-Descent (knn/NnDescentCpu.h); with
/// `initial`, GGM's merge of the parts split at `split` (`second`: rows [split, n) when they do
/// not follow `data` in memory). `clusters`: a shared k-means codebook for GNND's head start;
/// `uploaded` is called once the GPU holds the rows. Throws as nnDescentGraph.
KnnResult descendPiece(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress, const MatrixView<std::int32_t>* initial,
                       std::int64_t split, const MatrixView<float>* second = nullptr,
                       const gpu::GnndClusters& clusters = {},
                       const std::function<void()>& uploaded = {});

/// GGM's starting lists for the merge of two graphs, `first` of the pair's rows [0, split) and
/// `second` of its rows [split, n) (split = first.rows), each with ids local to its own rows:
/// row i's ids as ids of the pair (−1 padding kept), as wide as the wider graph, on `threads`
/// threads. Throws InvalidArgument when an id lies outside its graph's rows.
struct PairLists {
  std::vector<std::int32_t> ids;
  std::int64_t width = 0;
  MatrixView<std::int32_t> view() const {
    return {ids.data(), width > 0 ? std::int64_t(ids.size()) / width : 0, width};
  }
};
PairLists pairStartingLists(const MatrixView<std::int32_t>& first,
                            const MatrixView<std::int32_t>& second, int threads);

} // namespace nearscape::knn

#pragma once
// One piece of NN-Descent (internal): a whole graph, a shard of one, or GGM's merge of two, on
// the GPU (GNND) where there is one, else on the CPU. nnDescentGraph, mergeKnnGraphs and the
// shards of shardedGraph (knn/ShardedGraph.h) all build through it.

#include "knn/KnnDevice.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <functional>

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

} // namespace nearscape::knn

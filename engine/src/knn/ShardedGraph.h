#pragma once
// NN-Descent in pieces (internal): one piece on the GPU or the CPU, and GNND §5's shards of data
// beyond the memory budget or spread over several GPUs, merged pairwise by GGM.

#include "knn/KnnDevice.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <functional>

namespace nearscape::knn {

/// GNND on the GPU where there is one, else the CPU's NN-Descent (knn/NnDescent.cpp); with
/// `initial`, GGM's merge of the parts split at `split` (`second`: rows [split, n) when they do
/// not follow `data` in memory).
KnnResult descendPiece(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress, const MatrixView<std::int32_t>* initial,
                       std::int64_t split, const MatrixView<float>* second = nullptr,
                       const gpu::GnndClusters& clusters = {},
                       const std::function<void()>& uploaded = {});

/// Whether nnDescentGraph builds `n` items of `d` dimensions in shards: beyond the memory
/// budget. Several GPUs alone do not shard: data one GPU holds is built sooner whole there than
/// in halves and their GGM merge (manifold 10M × 96, two H200: 4.3 s on one, 4.9 s in halves on
/// two — docs/benchmarks.md).
bool buildsInShards(std::int64_t n, std::int64_t d, int k, const Context& context,
                    int listSize = 0);

/// GNND §5: shards built and every pair merged by GGM, each row's best k kept in host memory
/// (nnDescentGraph's semantics). On several GPUs the shards and the merges of disjoint pairs run
/// at once, one a GPU. Throws as nnDescentGraph, and InvalidArgument for a budget that would
/// need more than 64 shards.
KnnResult shardedGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress);

} // namespace nearscape::knn

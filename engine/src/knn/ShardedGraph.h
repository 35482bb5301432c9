#pragma once
// GNND §5's shards (internal): data beyond the memory budget or spread over several GPUs, built
// in pieces (knn/DescendPiece.h) and merged pairwise by GGM.

#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <vector>

namespace nearscape::knn {

/// Whether nnDescentGraph builds `n` items of `d` dimensions in shards: beyond the memory
/// budget. Several GPUs alone do not shard: data one GPU holds is built sooner whole there than
/// in halves and their GGM merge (docs/benchmarks.md, session 12).
bool buildsInShards(std::int64_t n, std::int64_t d, int k, const Context& context,
                    int listSize = 0);

/// One k-means codebook on the GPU for every piece and merge of a graph (a merge's head start
/// then reads its rows' clusters rather than clustering the pair): centroids of a strided sample
/// of all of `data`, 64 sample rows each, about 1,000 items a cluster of a piece of `pieceRows`
/// (manifold 10M × 96: 600 a cluster made the head start too narrow, recall 0.985 → 0.967).
/// Sets `count` to the centroids' number; 0 (and none) where the GPU cannot make them.
std::vector<float> sharedCodebook(const MatrixView<float>& data, std::int64_t pieceRows,
                                  Metric metric, const Context& context, int& count);

/// GNND §5: shards built and every pair merged by GGM, each row's best k kept in host memory
/// (nnDescentGraph's semantics). On several GPUs the shards and the merges of disjoint pairs run
/// at once, one a GPU. `backend`: what `context` resolved to at the public entry (on CUDA the
/// shards share one k-means codebook). Throws as nnDescentGraph, and InvalidArgument for a
/// budget that would need more than 64 shards.
KnnResult shardedGraph(const MatrixView<float>& data, int k, Metric metric, Backend backend,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress);

} // namespace nearscape::knn

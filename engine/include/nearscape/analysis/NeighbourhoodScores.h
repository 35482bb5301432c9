#pragma once
/// @file NeighbourhoodScores.h
/// Per-item scores read off exact kNN graphs: how far an item lies from its neighbours
/// (outliers), and how much of its neighbourhood two embeddings of the same items share.

#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <vector>

namespace nearscape {

/// The distance to each item's k-th nearest neighbour (column k − 1 of `distances`, n × ≥k,
/// nearest first): large for items far from everything. Throws InvalidArgument.
std::vector<float> kthNeighbourDistance(const MatrixView<float>& distances, int k);

/// The local outlier factor of each item (Breunig, Kriegel, Ng & Sander, 2000, with MinPts = k)
/// from its k nearest neighbours (`ids`, `distances`: n × ≥k, nearest first, exact):
///   k-distance(o) = distance to o's k-th neighbour,
///   reach(p, o)   = max(k-distance(o), d(p, o)),
///   lrd(p)        = 1 / (mean over o ∈ N_k(p) of reach(p, o) + 1e-10),
///   LOF(p)        = mean over o ∈ N_k(p) of lrd(o) / lrd(p).
/// About 1 inside a cluster, above 1 for an item less dense than its neighbours. The 1e-10 keeps
/// exact duplicates finite (scikit-learn's convention). Throws InvalidArgument.
std::vector<float> localOutlierFactor(const MatrixView<std::int32_t>& ids,
                                      const MatrixView<float>& distances, int k);

/// For each item, the share of its k nearest neighbours in `a` that are also among its k nearest
/// in `b` (|A ∩ B| / k; both n × ≥k graphs of the same items). Throws InvalidArgument.
std::vector<float> neighbourhoodOverlap(const MatrixView<std::int32_t>& a,
                                        const MatrixView<std::int32_t>& b, int k);

/// The items of the `count` largest `scores` (ties by smaller id), largest first; NaN last.
std::vector<std::int64_t> topItems(const std::vector<float>& scores, std::int64_t count);

} // namespace nearscape

#pragma once
/// @file FarInMap.h
/// Which true neighbours a map places far from their item, judged against what the map keeps.

#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <vector>

namespace nearscape {

/// For each of `others`, how many other items lie strictly nearer to `item` on the map
/// (`positions`: n × dim, host memory): 0 for the item's nearest point on the map. One pass over
/// the map. Throws InvalidArgument for ids out of range.
std::vector<std::int64_t> mapRanks(const MatrixView<float>& positions, std::int64_t item,
                                   const std::vector<std::int32_t>& others);

/// The map rank beyond which a true neighbour is "far in the map". A 2-D map keeps about 12% of
/// an item's 10 nearest neighbours among its 10 nearest map points (umap-learn's map of
/// Fashion-MNIST keeps 0.111), so "beyond the item's k nearest map points"
/// flags nearly every neighbour and tells nothing. Instead the map is judged against itself:
/// over a sample of items (`items`, with their true neighbours `neighbours`, items.size() × k,
/// the item itself left out), the map ranks of all those neighbour links are pooled, and the
/// limit is their (1 − `flaggedShare`) quantile — a neighbour is far when its link is among the
/// map's worst-kept `flaggedShare` of links (a fifth by default: a minority for every map,
/// whatever its overall trust). Never below k − 1, so a neighbour within the item's k nearest
/// map points is never flagged. Throws InvalidArgument (no items, share outside (0, 1)).
std::int64_t farInMapRankLimit(const MatrixView<float>& positions,
                               const std::vector<std::int64_t>& items,
                               const MatrixView<std::int32_t>& neighbours,
                               double flaggedShare = 0.2, int threads = 0);

} // namespace nearscape

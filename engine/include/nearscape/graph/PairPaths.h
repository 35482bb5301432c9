#pragma once
/// @file PairPaths.h
/// The min-max and shortest paths between one pair of items of a kNN graph given by its ids
/// alone (an ids .npy): what `nearscape-cli path --graph ids.npy` asks, with only the work one
/// pair needs. SpanningForest (Graph.h) serves many queries on one graph; this serves one.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/graph/Graph.h"

#include <cstdint>
#include <string>

namespace nearscape {

/// The two paths between a pair, and what the graph told on the way.
struct PairPaths {
  /// The min-max path (Faiss paper §6.6, eq. 19): the path in the graph's minimum spanning
  /// forest, Kruskal's with ties ordered by (weight, a, b) — SpanningForest's forest.
  GraphPath minimax;
  GraphPath shortest;          ///< least total weight (bidirectional Dijkstra)
  std::int64_t components = 0; ///< connected components of the symmetrised graph
  std::int64_t edges = 0;      ///< its undirected edges
  std::string weightNote;      ///< as symmetrizeKnnGraph's
  float weightOffset = 0;      ///< as symmetrizeKnnGraph's
  /// Seconds: the edges' weights; sorting them and the forest's scan; the walk along the
  /// forest's path; the reverse lists and Dijkstra (beside the forest).
  struct Seconds {
    double weights = 0, forest = 0, path = 0, shortest = 0;
  } seconds;
};

/// The min-max and the shortest path from `from` to `to` in the symmetrised kNN graph of `ids`
/// (n × k, row-major, host memory; −1 and an item's own id are no edge; the edge {i, j} when
/// either lists the other), weighted as symmetrizeKnnGraph weights (the float64 distance of the
/// rows of `data`, n × d, rounded to float; inner products made non-negative). The same paths,
/// components and weights as symmetrizeKnnGraph, SpanningForest (Kruskal) and shortestPath on
/// the same graph, without building it: each edge's distance once (a mutual pair once, on every
/// thread of `context`), then the edges sorted by weight and scanned (Kruskal) on one thread
/// while Dijkstra runs on another. The distances' sums run in another order than exactDistance's
/// (graph/EdgeDistance.h): a weight may differ from it by one float step, for values within
/// ~1e-16 of a rounding boundary. A path is not found when the pair lies in different
/// components. Throws InvalidArgument (shapes, ids beyond [−1, n), `from` or `to` out of range,
/// more than 2^32 − 1 cells), Cancelled.
PairPaths pairPathsOnKnnIds(const MatrixView<float>& data, const MatrixView<std::int32_t>& ids,
                            Metric metric, std::int32_t from, std::int32_t to,
                            const Context& context = {}, JobControl& job = noJobControl());

} // namespace nearscape

#pragma once
// From a kNN graph to a fixed-degree graph that greedy search can travel (internal).

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <vector>

namespace nearscape::index {

/// CAGRA's rule (Ootomo et al. 2024, §3.2 "graph optimization"), chosen because it needs no
/// distances, only ranks, so it costs O(n·K²) lookups whatever the dimension:
///  1. rank-based pruning: for node x with kNN list y_0 … y_{K−1}, the edge x → y_j has a detour
///     through y_i (i < j) when y_j appears in y_i's list at a rank below j; keep the `degree`
///     edges with the fewest detours (ties: the nearer first), in that order;
///  2. reverse edges: every kept x → y offers y → x, ranked by the edge's place in x's list;
///  3. merge: the first degree/2 kept edges, then reverse edges, then the rest of the kept ones.
/// Returns n × degree ids (−1 pads rows with fewer distinct neighbours). On the GPU when `context`
/// resolves to it (the same result: both follow the same rules and tie orders).
std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                              const Context& context);

/// optimiseSearchGraph on the CPU's `threads` (the GPU's twin:
/// gpu::IndexDevice::optimiseSearchGraph).
std::vector<std::int32_t> optimiseSearchGraphCpu(const MatrixView<std::int32_t>& knn, int degree,
                                                 int threads);

/// Step 1 alone on the CPU: each row's distinct neighbours (ids ≥ 0, not the row itself, an id
/// listed twice at its smaller rank) ordered by (detours, rank), the first `degree` kept, −1
/// padded. The GPU's twin is gpu::IndexDevice::pruneByDetours.
std::vector<std::int32_t> pruneByDetoursCpu(const MatrixView<std::int32_t>& knn, int degree,
                                            int threads);

} // namespace nearscape::index

namespace nearscape::index {

/// Long-range edges for clustered data (an HNSW upper layer folded into the flat graph): the
/// kNN graph of a random sample, pruned by the same rule to degree/2, gives each sampled node
/// edges to sampled nodes of other clusters; they take the second half of its row (the first
/// half keeps its own nearest). Without them a kNN graph of well-separated clusters has one
/// component per cluster and best-first search never leaves the cluster it starts in.
/// `sample` lists the sampled ids; `sampleGraph` is their pruned graph in sample-local ids.
void addLongRangeEdges(std::vector<std::int32_t>& graph, int degree,
                       const std::vector<std::int32_t>& sample,
                       const std::vector<std::int32_t>& sampleGraph, int sampleDegree);

} // namespace nearscape::index

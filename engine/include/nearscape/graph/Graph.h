#pragma once
/// @file Graph.h
/// Undirected weighted graphs made from kNN graphs, their minimum spanning forest, and min-max
/// ("smoothest") paths: the path between two items whose largest step is smallest (Faiss paper
/// §6.6, eq. 19). Such a path always lies on a minimum spanning tree, so after one MST every
/// query is a walk up the tree.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape {

/// An undirected graph in CSR form with non-negative weights; each row's targets ascend
/// (graphFromEdges makes them so; the spanning forest's tie order relies on it).
struct UndirectedGraph {
  std::int64_t nodes = 0;
  std::vector<std::int64_t> offsets; ///< nodes + 1
  std::vector<std::int32_t> targets; ///< both directions of every edge
  std::vector<float> weights;        ///< parallel to targets
  std::string weightNote;            ///< how weights relate to the metric's distances
  float weightOffset = 0;            ///< weight = distance − weightOffset (non-zero for IP only)

  std::int64_t edgeCount() const { return std::int64_t(targets.size() / 2); }
};

/// One edge of a graph or a spanning forest.
struct WeightedEdge {
  std::int32_t a = 0, b = 0;
  float weight = 0;
};

/// How graphFromEdges folds the weights of an edge listed more than once.
enum class DuplicateEdges {
  KeepSmaller, ///< the smallest weight (distances)
  FuzzyUnion,  ///< w = a + b − a·b (UMAP's union of membership strengths)
};

/// The undirected graph of `edges` over `nodes` nodes; self loops are kept out by the caller.
/// Built row by row in parallel (no global sort). Throws InvalidArgument for ids out of range.
UndirectedGraph graphFromEdges(std::int64_t nodes, const std::vector<WeightedEdge>& edges,
                               DuplicateEdges rule = DuplicateEdges::KeepSmaller, int threads = 0);

/// The symmetrised kNN graph: an edge {i, j} when either lists the other, weighted by their
/// distance. Inner-product distances (−⟨x, y⟩) become max⟨x, y⟩ − ⟨x, y⟩ over the graph's edges
/// so that weights are non-negative (weightNote says so). `ids`/`distances` are n × k; ids < 0
/// are skipped. Throws InvalidArgument for out-of-range ids or shape mismatches.
UndirectedGraph symmetrizeKnnGraph(const MatrixView<std::int32_t>& ids,
                                   const MatrixView<float>& distances, Metric metric);

/// Connected components: a label per node in [0, count), numbered by smallest member.
struct Components {
  std::vector<std::int32_t> label;
  std::int32_t count = 0;
  std::vector<std::int64_t> sizes;
};
Components connectedComponents(const UndirectedGraph& graph);

/// A minimum spanning forest, rooted per tree for path queries. Kruskal on the CPU, Borůvka on
/// CUDA; both order ties by (weight, a, b), so they return the same forest.
class SpanningForest {
public:
  /// Builds the forest of `graph` on the backend `context` resolves to (Auto: CUDA when usable,
  /// the CPU when the device runs out of memory). Throws Cancelled.
  explicit SpanningForest(const UndirectedGraph& graph, const Context& context = {},
                          JobControl& job = noJobControl());

  const std::vector<WeightedEdge>& edges() const { return m_edges; }
  double totalWeight() const;
  std::int64_t nodes() const { return std::int64_t(m_parent.size()); }
  /// Trees in the forest (1 when the graph is connected).
  std::int64_t treeCount() const { return m_trees; }
  /// The tree (by its root) holding `node`.
  std::int32_t rootOf(std::int32_t node) const { return m_root[std::size_t(node)]; }

  /// Node ids along the forest path from `from` to `to` (inclusive); empty when they lie in
  /// different trees. Throws InvalidArgument for ids out of range.
  std::vector<std::int32_t> path(std::int32_t from, std::int32_t to) const;
  /// Weight of the forest edge between adjacent path nodes.
  float edgeWeight(std::int32_t child, std::int32_t parent) const;
  /// Where the forest was computed ("CPU (Kruskal)", "CUDA (Borůvka)", …).
  const std::string& builtOn() const { return m_builtOn; }
  /// Seconds spent: finding the forest's edges (with the GPU's copies), of that on the device
  /// alone (0 on the CPU), and rooting the trees for path queries.
  struct Timings {
    double edges = 0, device = 0, rooting = 0;
  };
  const Timings& timings() const { return m_timings; }

private:
  void root(JobControl& job);

  std::vector<WeightedEdge> m_edges;
  std::vector<std::int32_t> m_parent; ///< −1 at roots
  std::vector<float> m_parentWeight;
  std::vector<std::int32_t> m_depth;
  std::vector<std::int32_t> m_root;
  std::int64_t m_trees = 0;
  std::string m_builtOn;
  Timings m_timings;
};

/// A path with its steps.
struct GraphPath {
  std::vector<std::int32_t> nodes;   ///< from … to; empty when none exists
  std::vector<float> steps;          ///< nodes.size() − 1 edge weights
  float bottleneck = 0;              ///< the largest step
  std::int64_t bottleneckIndex = -1; ///< index into steps of the largest step (first if tied)
  double total = 0;                  ///< sum of steps
  bool found() const { return !nodes.empty(); }
};

/// The min-max path between `from` and `to` (through the forest). Not found when they lie in
/// different components. Throws InvalidArgument for ids out of range.
GraphPath minimaxPath(const SpanningForest& forest, std::int32_t from, std::int32_t to);

/// The shortest path (least total weight, Dijkstra) for comparison. Throws InvalidArgument.
GraphPath shortestPath(const UndirectedGraph& graph, std::int32_t from, std::int32_t to);

/// The edges that joined a graph's components.
struct ComponentBridges {
  std::vector<WeightedEdge> edges; ///< weighted like the graph's
  /// True when every edge is its component's exact nearest edge to the rest (CrossPair::exact);
  /// false when some are mutually nearest pairs found by a descent.
  bool exact = true;
};

/// Edges that connect the graph's components, in Borůvka rounds over components: each
/// non-largest component gets the pair that joins it to the rest, which `nearestOutside` finds
/// among the graph's nodes (for example knn::nearestOutside over the vectors: exact for small
/// data and small components, else a mutually nearest pair). Every edge is a true pair of rows
/// with its exact distance, weighted like the graph's. Throws Cancelled, and what
/// `nearestOutside` throws.
ComponentBridges bridgeComponents(const UndirectedGraph& graph,
                                  const NearestOutside& nearestOutside,
                                  JobControl& job = noJobControl());

/// `graph` with `extra` edges added (both directions).
UndirectedGraph withEdges(const UndirectedGraph& graph, const std::vector<WeightedEdge>& extra);

} // namespace nearscape

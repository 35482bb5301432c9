#pragma once
/// @file Explore.h
/// What the explorer computes for a data set, as one engine call: the kNN graph, the exact
/// neighbours index (a clicked item's true neighbours), the map (PCA, then the kNN-graph layout,
/// in 2D or 3D) and the minimum spanning forest (min-max paths). The GUI's graph/map/forest job,
/// `nearscape-cli layout` and `path`, and `nearscape-bench layout` all run this pipeline.

#include "nearscape/graph/Graph.h"
#include "nearscape/knn/NnDescent.h"
#include "nearscape/layout/GraphLayout.h"
#include "nearscape/layout/Pca.h"

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace nearscape {

/// The pipeline's stages, in the order they run.
enum class ExploreStage { Graph, Neighbours, Map, Forest };

/// "graph", "neighbours", "map", "forest".
std::string_view exploreStageName(ExploreStage stage);

struct ExploreParams {
  Metric metric = Metric::L2; ///< of the graph, the neighbours and the forest's weights
  int k = 15;                 ///< graph neighbours per item when it is built (1 ≤ k ≤ n − 1)
  GraphMethod method = GraphMethod::Auto; ///< how it is built (Auto: resolveGraphMethod decides)
  NnDescentParams nnDescent;              ///< when it is built by NN-Descent (GNND on a GPU)
  bool neighbours = true;                 ///< build the exact neighbours index (ExactKnnIndex)
  bool map = true;                        ///< lay out the map
  bool forest = true;                     ///< build the spanning forest
  /// Before the forest, join the graph's components with their exact nearest cross-component
  /// edges (bridgeComponents), so that every pair of items has a path.
  bool bridge = false;
  /// The map's start when it is computed: PCA with `layout.dim` components (`components` is
  /// ignored), its axes fitted on a seeded sample of at most `maxSampleRows` rows. 10,000 rows of
  /// fashion-mnist give axes within 1.8° of all 70,000 rows' (cos 0.9995) in less time than
  /// 25,000 (docs/benchmarks.md, session 15), and the layout refines the start anyway.
  PcaParams pca = {.components = 2, .maxSampleRows = 10000};
  LayoutParams layout; ///< the map's dimension (2 or 3), epochs, …
};

/// What the pipeline computed (or was given); a stage turned off leaves its fields empty.
struct Exploration {
  /// How the graph was built: params.method resolved (resolveGraphMethod); as given when the
  /// graph was supplied.
  GraphMethod method = GraphMethod::Auto;
  KnnResult graph;                           ///< n × k ids and distances, nearest first
  std::shared_ptr<ExactKnnIndex> neighbours; ///< exact search over the data (kept by reference)
  Matrix<float> start;                       ///< n × dim: where the layout started (PCA)
  Matrix<float> map;                         ///< n × dim: the map
  UndirectedGraph undirected;                ///< the symmetrised graph (with `bridges`)
  std::vector<WeightedEdge> bridges;         ///< the edges params.bridge added
  bool bridgesExact = true; ///< each bridge its component's exact nearest (ComponentBridges)
  std::shared_ptr<SpanningForest> forest; ///< min-max paths: minimaxPath(*forest, a, b)
  /// Which stage results the caller supplied (ExploreStages) rather than the pipeline computed.
  bool graphSupplied = false, startSupplied = false, mapSupplied = false;
  /// Wall time of each stage (a supplied one: the hook's).
  struct Seconds {
    double graph = 0, neighbours = 0, start = 0, map = 0, forest = 0;
  } seconds;
};

/// Ways to supply a stage's result (a graph file, the GUI's artefact cache, a PCA view computed
/// earlier) and to watch the pipeline. Every hook runs on the pipeline's thread.
struct ExploreStages {
  /// The kNN graph (n rows); nothing: buildKnnGraph(data, params.k, params.metric, method, …)
  /// with the method resolved.
  std::function<std::optional<KnnResult>(const Exploration&)> graph;
  /// The finished map (n × layout.dim); nothing: computed from the start. Asked first, so that a
  /// supplied map needs no start.
  std::function<std::optional<Matrix<float>>(const Exploration&)> map;
  /// The layout's start (n × layout.dim); nothing: computePca(data, params.pca).
  std::function<std::optional<Matrix<float>>(const Exploration&)> start;
  /// The layout's positions as it refines (every layout.reportEvery epochs; valid during the call).
  LayoutProgress onLayout;
  /// Work that needs only the symmetrised graph (bridges included), run on a thread of its own
  /// while the forest is built and waited for before the forest stage ends (what it throws is
  /// rethrown then): the path command's Dijkstra beside Borůvka.
  std::function<void(const UndirectedGraph&)> besideForest;
  /// Each stage as it finishes, supplied or computed, with the exploration so far (to store a
  /// computed graph or map in a cache, to show it early).
  std::function<void(ExploreStage, const Exploration&)> onStage;
};

/// Runs graph → neighbours → map → forest over `data` (n × d, n ≥ 2; kept by reference by the
/// neighbours index), skipping the stages `params` turns off. Progress goes 0 → 1 across the
/// stages that run (each a `job.sub`), never backwards; a stop is checked between stages and
/// inside each. Throws InvalidArgument (k out of range, layout.dim not 2 or 3, NaN/Inf, a supplied
/// result of the wrong shape), DeviceUnavailable (a CUDA backend without a device), Cancelled,
/// and what the hooks throw.
Exploration explore(const MatrixView<float>& data, const ExploreParams& params,
                    const Context& context, JobControl& job = noJobControl(),
                    const ExploreStages& stages = {});

} // namespace nearscape

// nearscape-cli path: the min-max ("smoothest") path between two items through the kNN graph,
// beside the plain shortest path.
#include "Commands.h"
#include "CommonOptions.h"
#include "DistributedGraph.h"
#include "ResultJson.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

namespace nearscape::cli {
namespace {

struct PathArgs {
  std::string path, graph, metric, meta;
  std::int64_t from = -1, to = -1;
  int k = 10;
  bool bridge = false;
  CommonOptions common;
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int runPath(const PathArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  OpenOptions options;
  options.metaPath = a.meta;
  options.loadThumbnails = false;
  options.hash = isLeadRank(); // the other ranks read only their slices
  auto t = std::chrono::steady_clock::now();
  Dataset ds;
  onEveryRank("reading the data", [&] { // under mpirun: every rank, which agree on failures
    ds = openInput(a.path, options, job);
    for (auto [name, id] : {std::pair{"--from", a.from}, std::pair{"--to", a.to}})
      if (id < 0 || id >= ds.size())
        throw InvalidArgument(std::string(name) + " " + std::to_string(id) +
                              " is out of range [0, " + std::to_string(ds.size()) + ")");
  });
  const double loadSeconds = since(t);
  const Metric metric = chooseMetric(a.metric, ds);
  // Under mpirun the ranks build the graph together; rank 0 alone finds the paths.
  t = std::chrono::steady_clock::now();
  std::optional<KnnResult> distributed;
  nlohmann::ordered_json shares;
  if (commandRanks() && a.graph.empty())
    distributed =
        graphOnRanks(ds.vectors.view(), a.k, metric, GraphMethod::Auto, context, job, {}, shares);
  const double distributedSeconds = since(t);
  if (!isLeadRank())
    return kExitOk;

  // The graph (built, or read from --graph), then its spanning forest.
  ExploreParams params;
  params.metric = metric;
  params.k = a.k;
  params.neighbours = false;
  params.map = false;
  params.bridge = a.bridge;
  ExploreStages stages;
  // The plain shortest path, for comparison, on a thread of its own while the forest is built
  // (Dijkstra on 1M items: 0.36–0.47 s on an H100 host).
  GraphPath shortest;
  double shortestSeconds = 0;
  stages.besideForest = [&](const UndirectedGraph& g) {
    const auto started = std::chrono::steady_clock::now();
    shortest = shortestPath(g, std::int32_t(a.from), std::int32_t(a.to));
    shortestSeconds = since(started);
  };
  stages.graph = suppliedGraph(a.graph, ds, metric, distributed);
  const Exploration explored = explore(ds.vectors.view(), params, context, job, stages);
  const KnnResult& knn = explored.graph;
  const UndirectedGraph& graph = explored.undirected;
  const std::vector<WeightedEdge>& bridges = explored.bridges;
  const SpanningForest& forest = *explored.forest;
  const double graphSeconds = explored.seconds.graph + (shares.empty() ? 0 : distributedSeconds);
  const double mstSeconds = explored.seconds.forest;
  t = std::chrono::steady_clock::now();
  const GraphPath minimax = minimaxPath(forest, std::int32_t(a.from), std::int32_t(a.to));
  const double pathSeconds = since(t);
  // One tree of the spanning forest per connected component of the graph.
  const std::int64_t components = forest.treeCount();

  if (a.common.json) {
    results::MinimaxPathFacts facts;
    facts.from = a.from;
    facts.to = a.to;
    facts.metric = metric;
    facts.weights = graph.weightNote;
    facts.components = components;
    facts.bridgesAdded = bridges.size();
    facts.bridgesExact = explored.bridgesExact;
    facts.mstBackend = forest.builtOn();
    facts.graph =
        a.graph.empty() ? "k=" + std::to_string(a.k) + " (" + knn.report.describe() + ")" : a.graph;
    results::Labels labels;
    if (ds.hasLabels())
      labels = [&ds](std::int64_t id) { return ds.labelOf(id); };
    nlohmann::ordered_json j = results::minimaxPathJson(minimax, shortest, facts, labels);
    j["timings"] = {{"load_s", loadSeconds},
                    {"graph_s", graphSeconds},
                    {"mst_s", mstSeconds},
                    {"path_s", pathSeconds},
                    {"shortest_s", shortestSeconds}};
    if (const Ranks* ranks = commandRanks()) {
      j["ranks"] = ranks->size();
      j["per_rank"] = shares; // empty with --graph: rank 0 did everything
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else if (!minimax.found()) {
    std::cout << "items " << a.from << " and " << a.to << " lie in different components of the "
              << "graph (" << components << " components). Run again with --bridge to join "
              << "the components with their nearest cross-component edges.\n";
  } else {
    std::cout << "min-max path from " << a.from << " to " << a.to << " (" << graph.weightNote
              << "):\n";
    for (std::size_t i = 0; i < minimax.nodes.size(); ++i) {
      std::cout << "  " << minimax.nodes[i];
      if (ds.hasLabels())
        std::cout << "  [" << printableText(ds.labelOf(minimax.nodes[i]), 80) << "]"; // from a file
      if (i + 1 < minimax.nodes.size())
        std::cout << "   step " << minimax.steps[i]
                  << (std::int64_t(i) == minimax.bottleneckIndex ? "  <- bottleneck" : "");
      std::cout << '\n';
    }
    std::cout << "bottleneck    " << minimax.bottleneck << " (step " << minimax.bottleneckIndex
              << "), total " << minimax.total << ", " << minimax.steps.size() << " steps\n"
              << "shortest path " << shortest.steps.size() << " steps, total " << shortest.total
              << ", largest step " << shortest.bottleneck << '\n'
              << "time          graph " << graphSeconds << " s, MST " << mstSeconds << " s ("
              << forest.builtOn() << "), path " << pathSeconds * 1e3 << " ms\n";
  }
  return minimax.found() ? kExitOk : kExitFailure;
}

} // namespace

void addPathCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<PathArgs>();
  CLI::App* cmd = app.add_subcommand("path", "Min-max (smoothest) path between two items");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  cmd->add_option("--from", a->from, "First item")->required();
  cmd->add_option("--to", a->to, "Last item")->required();
  cmd->add_option("--graph", a->graph,
                  "kNN graph: our graph file or ids (.npy, n × k); built exactly when absent");
  cmd->add_option("--k", a->k, "Neighbours per item when the graph is built")
      ->capture_default_str();
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--meta", a->meta, "Metadata TSV (labels along the path)");
  cmd->add_flag("--bridge", a->bridge,
                "Join disconnected components with nearest cross-component edges (exact for "
                "small data and small components, else mutually nearest pairs)");
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] { exitCode = runGuarded([&] { return runPath(*a); }); });
}

} // namespace nearscape::cli

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

/// What either way of finding the paths gives the output.
struct PathOutcome {
  GraphPath minimax, shortest;
  std::string weightNote, builtOn, graph;
  std::int64_t components = 0;
  std::size_t bridgesAdded = 0;
  bool bridgesExact = true;
  double graphSeconds = 0, mstSeconds = 0, pathSeconds = 0, shortestSeconds = 0;
};

/// Whether `path` names a graph of ids alone (a .npy, not our graph file). A path that cannot be
/// sniffed counts as our file: its reader then says what is wrong.
bool isIdsGraph(const std::string& path) {
  if (path.empty())
    return false;
  try {
    return !isGraphFile(path);
  } catch (const Error&) {
    return false;
  }
}

/// The paths straight from a graph's ids (graph/PairPaths.h) on the CPU: no CSR graph, no whole
/// rooted forest, each edge weighed once. Nothing when the graph is beyond its 2^32 cells.
std::optional<PathOutcome> pathsFromIds(const PathArgs& a, const Dataset& ds, Metric metric,
                                        const Context& context, JobControl& job) {
  auto t = std::chrono::steady_clock::now();
  const Matrix<std::int32_t> ids = readKnnIds(a.graph);
  if (ids.rows() != ds.size())
    throw InvalidArgument(a.graph + ": the graph has " + std::to_string(ids.rows()) +
                          " rows but the data has " + std::to_string(ds.size()));
  if (ids.rows() * ids.cols() > std::int64_t(UINT32_MAX))
    return std::nullopt;
  const double readSeconds = since(t);
  PairPaths paths = pairPathsOnKnnIds(ds.vectors.view(), ids.view(), metric, std::int32_t(a.from),
                                      std::int32_t(a.to), context, job);
  PathOutcome o;
  o.minimax = std::move(paths.minimax);
  o.shortest = std::move(paths.shortest);
  o.weightNote = paths.weightNote;
  o.builtOn = "CPU (Kruskal)";
  o.graph = a.graph;
  o.components = paths.components;
  o.graphSeconds = readSeconds + paths.seconds.weights;
  o.mstSeconds = paths.seconds.forest;
  o.pathSeconds = paths.seconds.path;
  o.shortestSeconds = paths.seconds.shortest;
  return o;
}

int runPath(const PathArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  // A graph of ids on the CPU: the pair's paths from the ids alone. The data's content hash
  // (0.07–0.12 s at 1M × 128 on 2 cores) is then of no use: only our graph file carries one.
  const bool fromIds =
      isIdsGraph(a.graph) && !a.bridge &&
      (context.backend == Backend::Cpu ||
       (context.backend == Backend::Auto && resolveBackend(context) == Backend::Cpu));
  OpenOptions options;
  options.metaPath = a.meta;
  options.loadThumbnails = false;
  options.hash = isLeadRank() && !fromIds; // the other ranks read only their slices
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

  std::optional<PathOutcome> found;
  if (fromIds)
    found = pathsFromIds(a, ds, metric, context, job);
  Exploration explored; // kept for the output: the graph's report
  if (!found) {
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
    PathOutcome o;
    stages.besideForest = [&](const UndirectedGraph& g) {
      const auto started = std::chrono::steady_clock::now();
      o.shortest = shortestPath(g, std::int32_t(a.from), std::int32_t(a.to));
      o.shortestSeconds = since(started);
    };
    stages.graph = suppliedGraph(a.graph, ds, metric, distributed);
    explored = explore(ds.vectors.view(), params, context, job, stages);
    const SpanningForest& forest = *explored.forest;
    o.graphSeconds = explored.seconds.graph + (shares.empty() ? 0 : distributedSeconds);
    o.mstSeconds = explored.seconds.forest;
    t = std::chrono::steady_clock::now();
    o.minimax = minimaxPath(forest, std::int32_t(a.from), std::int32_t(a.to));
    o.pathSeconds = since(t);
    // One tree of the spanning forest per connected component of the graph.
    o.components = forest.treeCount();
    o.weightNote = explored.undirected.weightNote;
    o.builtOn = forest.builtOn();
    o.bridgesAdded = explored.bridges.size();
    o.bridgesExact = explored.bridgesExact;
    o.graph = a.graph.empty()
                  ? "k=" + std::to_string(a.k) + " (" + explored.graph.report.describe() + ")"
                  : a.graph;
    found = std::move(o);
  }
  const PathOutcome& o = *found;
  const GraphPath& minimax = o.minimax;

  if (a.common.json) {
    results::MinimaxPathFacts facts;
    facts.from = a.from;
    facts.to = a.to;
    facts.metric = metric;
    facts.weights = o.weightNote;
    facts.components = o.components;
    facts.bridgesAdded = o.bridgesAdded;
    facts.bridgesExact = o.bridgesExact;
    facts.mstBackend = o.builtOn;
    facts.graph = o.graph;
    results::Labels labels;
    if (ds.hasLabels())
      labels = [&ds](std::int64_t id) { return ds.labelOf(id); };
    nlohmann::ordered_json j = results::minimaxPathJson(minimax, o.shortest, facts, labels);
    j["timings"] = {{"load_s", loadSeconds},
                    {"graph_s", o.graphSeconds},
                    {"mst_s", o.mstSeconds},
                    {"path_s", o.pathSeconds},
                    {"shortest_s", o.shortestSeconds}};
    if (const Ranks* ranks = commandRanks()) {
      j["ranks"] = ranks->size();
      j["per_rank"] = shares; // empty with --graph: rank 0 did everything
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else if (!minimax.found()) {
    std::cout << "items " << a.from << " and " << a.to << " lie in different components of the "
              << "graph (" << o.components << " components). Run again with --bridge to join "
              << "the components with their nearest cross-component edges.\n";
  } else {
    std::cout << "min-max path from " << a.from << " to " << a.to << " (" << o.weightNote << "):\n";
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
              << "shortest path " << o.shortest.steps.size() << " steps, total " << o.shortest.total
              << ", largest step " << o.shortest.bottleneck << '\n'
              << "time          graph " << o.graphSeconds << " s, MST " << o.mstSeconds << " s ("
              << o.builtOn << "), path " << o.pathSeconds * 1e3 << " ms\n";
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

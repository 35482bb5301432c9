// nearscape-cli layout: the map (2D or 3D) of the kNN graph, and how many true neighbours it keeps.
#include "Commands.h"
#include "CommonOptions.h"
#include "DistributedGraph.h"

#include "nearscape/layout/MapTrust.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

namespace nearscape::cli {
namespace {

struct LayoutArgs {
  std::string path, graph, out, metric, trust;
  int dim = 2, k = 15, epochs = 0, trustK = 10;
  std::int64_t trustSample = kMapTrustSampleRows;
  CommonOptions common;
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int runLayout(const LayoutArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  OutputSet outputs; // checked now, written at the end or not at all
  Dataset ds;
  onEveryRank("reading the data", [&] { // under mpirun: every rank, which agree on failures
    addDataInput(outputs, a.path);
    outputs.addInput(a.graph);
    outputs.addOutput(a.out);
    outputs.addOutput(a.trust);
    NEARSCAPE_EXPECTS(a.trustK >= 1, "--trust-k must be at least 1");
    OpenOptions options;
    options.loadThumbnails = false;
    options.hash = isLeadRank(); // the other ranks read only their slices
    ds = openInput(a.path, options, job);
    if (a.dim != 2 && a.dim != 3)
      throw InvalidArgument("--dim must be 2 or 3");
  });
  const Metric metric = chooseMetric(a.metric, ds);
  const auto started = std::chrono::steady_clock::now();
  auto t = started;
  // Under mpirun the ranks build the graph together; rank 0 alone lays it out.
  std::optional<KnnResult> distributed;
  nlohmann::ordered_json shares;
  if (commandRanks() && a.graph.empty())
    distributed =
        graphOnRanks(ds.vectors.view(), a.k, metric, GraphMethod::Auto, context, job, {}, shares);
  const double distributedSeconds = since(t);
  if (!isLeadRank())
    return kExitOk;
  // The graph (built, or read from --graph), then the map from its PCA view.
  ExploreParams params;
  params.metric = metric;
  params.k = a.k;
  params.neighbours = false;
  params.forest = false;
  params.layout.dim = a.dim;
  params.layout.epochs = a.epochs;
  ExploreStages stages;
  stages.graph = suppliedGraph(a.graph, ds, metric, distributed);
  const Exploration explored = explore(ds.vectors.view(), params, context, job, stages);
  const KnnResult& knn = explored.graph;
  const Matrix<float>& xy = explored.map;
  const double graphSeconds = explored.seconds.graph + (shares.empty() ? 0 : distributedSeconds);
  const double layoutSeconds = explored.seconds.start + explored.seconds.map;
  const double totalSeconds = since(started);
  job.check();

  // Map trust: per item, the share of its exact k nearest neighbours (original space) among its
  // k nearest on the map (exact too). The graph serves as the truth when it is exact and wide
  // enough, whichever exact method built it (STEP's too) and whether built here or given as a
  // graph file that says it was built exactly (its first k columns are then the exact k-NN,
  // ties to the smaller id as knnGraph's). Otherwise every item's trust costs a second, exact
  // graph: built only when --trust asks for every item's; --json alone gets the mean estimated
  // from an exact check of a seeded sample, with its standard error.
  std::optional<LayoutQuality> trust;
  std::optional<MapTrustEstimate> estimate;
  double trustSeconds = 0;
  std::string truthSource;
  if (!a.trust.empty() || a.common.json) {
    t = std::chrono::steady_clock::now();
    NEARSCAPE_EXPECTS(a.trustK < ds.size(), "--trust-k must be below the number of items");
    const bool graphIsTruth = knn.report.exact() && knn.ids.cols() >= a.trustK;
    if (graphIsTruth || !a.trust.empty()) {
      const KnnResult truth =
          graphIsTruth ? KnnResult{} : knnGraph(ds.vectors.view(), a.trustK, metric, context, job);
      trust = layoutQuality(graphIsTruth ? knn.ids.view() : truth.ids.view(), xy.view(), a.trustK,
                            effectiveThreads(context));
      truthSource = graphIsTruth ? "graph" : "built";
    } else {
      estimate = estimateMapTrust(ds.vectors.view(), xy.view(), a.trustK, metric, context, job,
                                  a.trustSample, context.seed);
      truthSource = "sample";
    }
    trustSeconds = since(t);
  }
  if (!a.out.empty())
    writeNpy(a.out, xy.view());
  if (!a.trust.empty())
    writeNpy(a.trust, MatrixView<float>{trust->perItem.data(), ds.size(), 1});
  outputs.commit();

  // Quality against the true 10-NN: the graph's first 10 columns when it is exact and wide enough.
  const int qk = 10;
  std::optional<double> kept, pcaKept;
  if (knn.ids.cols() >= qk && a.graph.empty()) {
    kept = layoutQuality(knn.ids.view(), xy.view(), qk).overall;
    pcaKept = layoutQuality(knn.ids.view(), explored.start.view(), qk).overall;
  }
  if (a.common.json) {
    nlohmann::ordered_json j;
    j["rows"] = ds.size();
    j["dim"] = a.dim;
    j["k"] = knn.ids.cols();
    j["metric"] = std::string(metricName(metric));
    j["neighbours_kept_10"] = kept ? nlohmann::json(*kept) : nlohmann::json(nullptr);
    j["pca_neighbours_kept_10"] = pcaKept ? nlohmann::json(*pcaKept) : nlohmann::json(nullptr);
    // The exact k-NN behind it: the graph's (reused), built, or a sample's (an estimate).
    const double mean = trust ? trust->overall : estimate->mean;
    const double error = trust ? 0.0 : estimate->standardError;
    j["trust"] = {{"k", a.trustK},
                  {"mean", mean},
                  {"standard_error", error},
                  {"ci95", {trust ? mean : estimate->low95, trust ? mean : estimate->high95}},
                  {"sampled", trust ? ds.size() : estimate->sampled},
                  {"out", a.trust},
                  {"truth", truthSource}};
    j["out"] = a.out;
    j["timings"] = {{"graph_s", graphSeconds},
                    {"layout_s", layoutSeconds},
                    {"total_s", totalSeconds},
                    {"trust_s", trustSeconds}};
    if (const Ranks* ranks = commandRanks()) {
      j["ranks"] = ranks->size();
      j["per_rank"] = shares; // empty with --graph: rank 0 did everything
    }
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << a.dim << "D layout of " << ds.size() << " items: " << totalSeconds << " s (graph "
              << graphSeconds << " s, layout " << layoutSeconds << " s)\n";
    if (kept)
      std::cout << "true 10-NN kept in the map: " << *kept << " (PCA: " << *pcaKept << ")\n";
    if (trust)
      std::cout << "map trust: " << trust->overall << " of each item's exact " << a.trustK
                << "-NN are among its " << a.trustK << " nearest on the map (mean); wrote "
                << a.trust << '\n';
    if (!a.out.empty())
      std::cout << "wrote " << a.out << '\n';
  }
  return kExitOk;
}

} // namespace

void addLayoutCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<LayoutArgs>();
  CLI::App* cmd = app.add_subcommand("layout", "2D/3D map of the kNN graph, with its quality");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  cmd->add_option("--dim", a->dim, "2 or 3")->capture_default_str();
  cmd->add_option("--graph", a->graph,
                  "kNN graph: our graph file or ids (.npy, n × k); built exactly when absent");
  cmd->add_option("--k", a->k, "Neighbours per item when the graph is built")
      ->capture_default_str();
  cmd->add_option("--epochs", a->epochs, "SGD epochs (0: 500 up to 10,000 items, else 200)")
      ->check(atLeast(0));
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--out", a->out, "Write positions here (.npy, float32, n × dim)");
  cmd->add_option("--trust", a->trust,
                  "Write each item's map trust here (.npy, float32, n × 1): the share of its "
                  "exact k nearest neighbours among its k nearest on the map");
  cmd->add_option("--trust-k", a->trustK, "Neighbours that map trust compares")
      ->capture_default_str();
  cmd->add_option("--trust-sample", a->trustSample,
                  "Items whose exact neighbours estimate map trust's mean (--json without "
                  "--trust, when the graph is not exact)")
      ->check(atLeast(2))
      ->capture_default_str();
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] {
    exitCode = runGuarded([&] { return runLayout(*a); }, {a->path, std::string()});
  });
}

} // namespace nearscape::cli

// The map and the min-max path suites.
#include "LayoutSuite.h"

#include "BenchUtil.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

namespace nearscape::bench {
namespace {

/// --backend's value as a Context.
Context contextFor(const std::string& backend, int threads) {
  Context context;
  context.threads = threads;
  const auto parsed = parseBackend(backend);
  if (!parsed)
    throw InvalidArgument("--backend must be auto, cpu or cuda");
  context.backend = *parsed;
  return context;
}

struct LayoutArgs {
  std::string data, label, jsonOut, peer = "umap-learn", backend = "auto", graph = "auto";
  int dim = 2, k = 15, repeats = 1, threads = 0;
  std::string python = "/usr/bin/python3";
  std::string peersDir = NEARSCAPE_PEERS_DIR;
};

int runLayout(const LayoutArgs& a) {
  const Context context = contextFor(a.backend, a.threads);
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  const MatrixView<float> x = ds.vectors.view();
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  const std::string peerData = a.peer == "none" ? "" : writeTemporaryNpy(x, "layout-data.npy");
  const std::string peerOut =
      (std::filesystem::temp_directory_path() / "nearscape-bench" / "layout-peer.npy").string();

  NEARSCAPE_EXPECTS(a.graph == "auto" || a.graph == "exact", "--graph must be auto or exact");
  const GraphMethod method =
      resolveGraphMethod(*parseGraphMethod(a.graph), x.rows, x.cols, a.k, context);
  KnnResult truth;
  std::vector<double> ours, oursGraph, oursMap, theirs, oursKept, theirsKept;
  std::string graphDevice;
  for (int r = 0; r < a.repeats; ++r) {
    // The graph, then the map from its PCA view: the pipeline `nearscape-cli layout` runs.
    ExploreParams params;
    params.k = a.k;
    params.method = method;
    params.neighbours = false;
    params.forest = false;
    params.layout.dim = a.dim;
    const auto t = std::chrono::steady_clock::now();
    const Exploration explored = explore(x, params, context);
    ours.push_back(secondsSince(t));
    const KnnResult& g = explored.graph;
    const Matrix<float>& xy = explored.map;
    graphDevice = g.report.describe();
    oursGraph.push_back(explored.seconds.graph);
    oursMap.push_back(explored.seconds.start + explored.seconds.map);
    if (truth.ids.empty())
      truth = g; // exact, k ≥ 10: its first 10 columns are the true 10-NN
    oursKept.push_back(layoutQuality(truth.ids.view(), xy.view(), 10).overall);
    if (a.peer == "none")
      continue;
    std::ostringstream cmd;
    cmd << a.python << " " << a.peersDir << "/umap_layout.py " << peerData << " " << peerOut
        << " --dim " << a.dim << " --neighbors " << a.k;
    const nlohmann::json p = runPeer(cmd.str());
    theirs.push_back(p.at("seconds").get<double>());
    const Dataset peerMap = openDataset(peerOut, options);
    theirsKept.push_back(layoutQuality(truth.ids.view(), peerMap.vectors.view(), 10).overall);
  }
  std::vector<Row> table;
  std::ostringstream note;
  note << "10-NN kept: ours " << median(oursKept) << ", peer " << median(theirsKept)
       << " (graph included in both times; ours: graph " << median(oursGraph) << " s ("
       << graphDevice << ") + PCA and map " << median(oursMap) << " s on "
       << describeBackend(context) << ")";
  table.push_back({label + " " + std::to_string(a.dim) + "D map", median(ours), a.peer,
                   median(theirs), note.str()});
  printTable("layout (median of " + std::to_string(a.repeats) + ", interleaved)", table);
  if (!a.jsonOut.empty()) {
    nlohmann::json j = {{"suite", "layout"},
                        {"data", label},
                        {"rows", x.rows},
                        {"dim", a.dim},
                        {"backend", describeBackend(context)},
                        {"ours_s", median(ours)},
                        {"ours_runs", ours},
                        {"ours_kept10", median(oursKept)},
                        {"ours_graph_s", median(oursGraph)},
                        {"ours_map_s", median(oursMap)},
                        {"peer", a.peer},
                        {"peer_s", median(theirs)},
                        {"peer_runs", theirs},
                        {"peer_kept10", median(theirsKept)}};
    writeJsonOutput(a.jsonOut, j, {a.data});
  }
  if (!peerData.empty())
    std::filesystem::remove(peerData);
  return 0;
}

struct MstArgs {
  std::string data, label, graph, backend = "auto";
  int k = 10, queries = 1000, threads = 0;
};

int runMst(const MstArgs& a) {
  const Context context = contextFor(a.backend, a.threads);
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  KnnResult g;
  if (!a.graph.empty()) {
    g = readKnnGraph(a.graph, ds, Metric::L2);
  } else {
    g = knnGraph(ds.vectors.view(), a.k, Metric::L2, context);
  }
  auto t = std::chrono::steady_clock::now();
  const UndirectedGraph graph = symmetrizeKnnGraph(g.ids.view(), g.distances.view(), Metric::L2);
  const double symSeconds = secondsSince(t);
  t = std::chrono::steady_clock::now();
  const SpanningForest forest(graph, context);
  const double mstSeconds = secondsSince(t);
  Context cpu = context;
  cpu.backend = Backend::Cpu;
  const bool compare = resolveBackend(context) == Backend::Cuda;
  const double kruskalSeconds = compare ? SpanningForest(graph, cpu).timings().edges : 0.0;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int32_t> pick(0, std::int32_t(ds.size() - 1));
  std::vector<double> perQuery;
  double steps = 0;
  for (int q = 0; q < a.queries; ++q) {
    const std::int32_t s = pick(rng), e = pick(rng);
    t = std::chrono::steady_clock::now();
    const GraphPath p = minimaxPath(forest, s, e);
    perQuery.push_back(secondsSince(t));
    steps += double(p.steps.size());
  }
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  std::ostringstream note;
  const SpanningForest::Timings& times = forest.timings();
  note << graph.edgeCount() << " edges, " << forest.treeCount() << " trees, weight "
       << forest.totalWeight() << "; " << forest.builtOn() << ": edges " << times.edges * 1e3
       << " ms";
  if (compare)
    note << " (on the device " << times.device * 1e3 << " ms)";
  note << ", rooting " << times.rooting * 1e3 << " ms; symmetrise " << symSeconds << " s; path p50 "
       << median(perQuery) * 1e3 << " ms, mean " << steps / a.queries << " steps";
  printTable("MST and min-max paths (" + describeBackend(context) + ")",
             {{label + " MST", mstSeconds, compare ? "our CPU Kruskal" : "none", kruskalSeconds,
               note.str()}});
  return 0;
}

struct NndArgs {
  std::string data, truth, label, backend = "cpu", peer = "pynndescent";
  int k = 10, repeats = 1;
  std::int64_t rows = 0;      ///< > 0: the first this many rows of the data only
  std::string memoryBudget;   ///< e.g. "2G": shards merged by GGM beyond it
  std::int64_t checkRows = 0; ///< > 0: recall on this many seeded rows (exact search), not all
  NnDescentParams params;
  std::string python = "/usr/bin/python3";
  std::string peersDir = NEARSCAPE_PEERS_DIR;
};

int runNnd(const NndArgs& a) {
  Context context = contextFor(a.backend, 0);
  if (!a.memoryBudget.empty())
    context.memoryBudget = parseByteSize(a.memoryBudget);
  NEARSCAPE_EXPECTS(a.peer == "pynndescent" || a.peer == "exact" || a.peer == "none",
                    "--peer must be pynndescent, exact or none");
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  const MatrixView<float> x{ds.vectors.data(),
                            a.rows > 0 ? std::min(a.rows, ds.vectors.rows()) : ds.vectors.rows(),
                            ds.vectors.cols()};
  // The exact graph: the judge of both and, with --peer exact, the peer itself (timed after ours
  // in each repeat, warm).
  std::vector<std::int32_t> truth;
  // --check-rows: the truth of a seeded sample of rows only, by an exact search of those rows
  // (k + 1 neighbours, the row itself dropped): data too large for the exact graph.
  std::vector<std::int64_t> sample;
  if (a.checkRows > 0 && a.checkRows < x.rows) {
    NEARSCAPE_EXPECTS(a.peer != "exact", "--check-rows takes --peer pynndescent or none");
    sample = seededSample(x.rows, a.checkRows, 1234);
    std::vector<float> queries;
    for (const std::int64_t r : sample)
      queries.insert(queries.end(), x.row(r), x.row(r) + x.cols);
    const KnnResult found = knnSearch({queries.data(), std::int64_t(sample.size()), x.cols}, x,
                                      a.k + 1, Metric::L2, context);
    for (std::size_t r = 0; r < sample.size(); ++r) {
      int taken = 0;
      for (int c = 0; c <= a.k && taken < a.k; ++c)
        if (found.ids.row(std::int64_t(r))[c] != sample[r] || c == a.k) {
          truth.push_back(found.ids.row(std::int64_t(r))[c]);
          ++taken;
        }
    }
  }
  if (!sample.empty()) {
  } else if (!a.truth.empty()) {
    const Matrix<std::int64_t> t = readNpyIds(a.truth);
    for (std::int64_t i = 0; i < t.rows(); ++i)
      for (int c = 0; c < a.k; ++c)
        truth.push_back(std::int32_t(t.row(i)[c]));
  }
  if (sample.empty() && (a.truth.empty() || a.peer == "exact")) {
    const KnnResult exact = knnGraph(x, a.k, Metric::L2, context);
    if (truth.empty())
      truth.assign(exact.ids.data(), exact.ids.data() + exact.ids.rows() * a.k);
  }
  const MatrixView<std::int32_t> truthView{
      truth.data(), sample.empty() ? x.rows : std::int64_t(sample.size()), a.k};
  // Recall of `ids` (all rows) on the rows the truth covers.
  auto recall = [&](const MatrixView<std::int32_t>& ids) {
    if (sample.empty())
      return recallAtK(ids, truthView, a.k, x, x, Metric::L2);
    std::vector<std::int32_t> rows;
    for (const std::int64_t r : sample)
      rows.insert(rows.end(), ids.row(r), ids.row(r) + a.k);
    return recallAtK({rows.data(), std::int64_t(sample.size()), a.k}, truthView, a.k, x, x,
                     Metric::L2, sample);
  };
  const std::string peerData = a.peer == "pynndescent" ? writeTemporaryNpy(x, "nnd-data.npy") : "";
  const std::string peerOut =
      (std::filesystem::temp_directory_path() / "nearscape-bench" / "nnd-peer.npy").string();
  std::vector<double> ours, theirs, oursRecall, theirsRecall;
  std::string device;
  for (int r = 0; r < a.repeats; ++r) {
    const auto t = std::chrono::steady_clock::now();
    const KnnResult g = nnDescentGraph(x, a.k, Metric::L2, context, noJobControl(), a.params);
    ours.push_back(secondsSince(t));
    device = g.report.describe();
    oursRecall.push_back(recall(g.ids.view()));
    if (a.peer == "none")
      continue;
    if (a.peer == "exact") { // timed again each repeat: the first call also warmed the device
      const auto te = std::chrono::steady_clock::now();
      (void)knnGraph(x, a.k, Metric::L2, context);
      theirs.push_back(secondsSince(te));
      theirsRecall.push_back(1.0);
      continue;
    }
    std::ostringstream cmd;
    cmd << a.python << " " << a.peersDir << "/pynndescent_graph.py " << peerData << " " << a.k
        << " " << peerOut;
    theirs.push_back(runPeer(cmd.str()).at("seconds").get<double>());
    const Matrix<std::int64_t> p = readNpyIds(peerOut);
    std::vector<std::int32_t> p32(p.data(), p.data() + p.rows() * p.cols());
    theirsRecall.push_back(recall({p32.data(), p.rows(), p.cols()}));
  }
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  std::ostringstream note;
  note << "recall@" << a.k
       << (sample.empty() ? "" : " on " + std::to_string(sample.size()) + " rows") << ": ours "
       << median(oursRecall) << " (" << device << ")";
  if (!theirsRecall.empty())
    note << ", peer " << median(theirsRecall);
  printTable("NN-Descent kNN graph (" + describeBackend(context) + ", median of " +
                 std::to_string(a.repeats) + ", interleaved)",
             {{label + " " + std::to_string(a.k) + "-NN graph", median(ours),
               a.peer == "exact" ? "our exact graph" : a.peer,
               theirs.empty() ? 0.0 : median(theirs), note.str()}});
  if (!peerData.empty())
    std::filesystem::remove(peerData);
  return 0;
}

} // namespace

void addNnDescentSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<NndArgs>();
  CLI::App* cmd = app.add_subcommand("nndescent", "NN-Descent graph vs pynndescent, with recall");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--truth", a->truth, "Exact ids (.npy); computed when absent");
  cmd->add_option("--backend", a->backend, "cpu, cuda or auto")->capture_default_str();
  cmd->add_option("--peer", a->peer, "pynndescent, or exact: our exact graph on the same backend")
      ->capture_default_str();
  cmd->add_option("--iters", a->params.maxIterations, "Most iterations")->capture_default_str();
  cmd->add_option("--delta", a->params.delta, "Stop below this update rate")->capture_default_str();
  cmd->add_option("--sample", a->params.sampleSize,
                  "NEW/OLD samples per node (0: 2k; the GPU takes 16 or 32)")
      ->capture_default_str();
  cmd->add_option("--list-size", a->params.listSize,
                  "GNND's working lists' length, k to 64 (0: 2k, at most 32)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->add_flag(
      "--no-cluster-seeds", [a](std::int64_t) { a->params.clusterSeeds = false; },
      "GNND: no cluster seeds once the lists converge");
  cmd->add_option("--merge-iters", a->params.mergeIterations, "Most iterations of a GPU GGM merge")
      ->capture_default_str();
  cmd->add_option("--memory-budget", a->memoryBudget,
                  "Working-memory budget, e.g. 2G: shards merged by GGM");
  cmd->add_option("--rows", a->rows,
                  "Use the first ROWS rows of the data only (a crossover sweep)");
  cmd->add_option("--check-rows", a->checkRows,
                  "Recall on this many seeded rows (0: all, from the exact graph)");
  cmd->add_option("--k", a->k)->capture_default_str();
  cmd->add_option("--repeats", a->repeats)->capture_default_str();
  cmd->add_option("--python", a->python)->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir)->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runNnd(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

void addLayoutSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<LayoutArgs>();
  CLI::App* cmd = app.add_subcommand("layout", "kNN graph + map vs umap-learn, with 10-NN kept");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--dim", a->dim)->capture_default_str();
  cmd->add_option("--k", a->k, "Graph neighbours (umap-learn's n_neighbors)")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats)->capture_default_str();
  cmd->add_option("--peer", a->peer, "umap-learn or none")->capture_default_str();
  cmd->add_option("--graph", a->graph, "auto (exact where cheaper, else NN-Descent/GNND) or exact")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads);
  cmd->add_option("--backend", a->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--python", a->python)->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir)->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->add_option("--json-out", a->jsonOut);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runLayout(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

void addMstSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<MstArgs>();
  CLI::App* cmd = app.add_subcommand("mst", "Spanning forest and min-max path queries");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--graph", a->graph, "kNN ids (.npy); built exactly when absent");
  cmd->add_option("--k", a->k)->capture_default_str();
  cmd->add_option("--queries", a->queries)->capture_default_str();
  cmd->add_option("--threads", a->threads);
  cmd->add_option("--backend", a->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runMst(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

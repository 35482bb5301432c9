// nearscape-cli knn: exact k-nearest neighbours of every item (the kNN graph) or of queries.
#include "Commands.h"
#include "CommonOptions.h"
#include "DistributedGraph.h"
#include "ResultJson.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace nearscape::cli {
namespace {

struct KnnArgs {
  std::string path, queries, out, outDist, truth, meta, extend;
  std::string metric;
  std::string method = "exact";
  int k = 10;
  int iters = NnDescentParams{}.maxIterations;
  int sample = 0;
  int listSize = 0;
  bool noClusterSeeds = false;
  CommonOptions common;
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int runKnn(const KnnArgs& args) {
  const Context context = args.common.context();
  const std::optional<GraphMethod> asked = parseGraphMethod(args.method);
  if (!asked)
    throw InvalidArgument("--method must be exact, nndescent or auto");
  if (args.iters < 1)
    throw InvalidArgument("--iters must be at least 1 (NN-Descent needs an iteration to improve "
                          "its random start)");
  JobControl& job = commandJob();
  // Under mpirun every rank reads and checks the same inputs; the graph or the search is
  // distributed.
  refuseUnderRanks(!args.extend.empty(), "--extend");
  // Outputs are checked before any work, and land together at the end (or not at all).
  OutputSet outputs;
  Dataset data, queries;
  auto t = std::chrono::steady_clock::now();
  onEveryRank("reading the data", [&] {
    for (const std::string& input : {args.path, args.queries})
      if (!input.empty())
        addDataInput(outputs, input);
    outputs.addInput(args.truth);
    outputs.addInput(args.extend);
    outputs.addInput(args.meta);
    outputs.addOutput(args.out);
    outputs.addOutput(args.outDist);
    OpenOptions options;
    options.loadThumbnails = false;
    options.hash = isLeadRank(); // the other ranks read only their slices
    data = openInput(args.path, options, job);
    if (!args.queries.empty())
      queries = openInput(args.queries, options, job);
  });
  const double loadSeconds = since(t);
  // A search the fused kernel takes needs no float16 GEMM from cuBLAS: the warm-up, still starting
  // the device, need not load one (d = 784, not fused, was 15 ms slower without it on an H100).
  if (!args.queries.empty() && gpuSearchIsFused(data.dim(), args.k))
    warmUpWithoutFloat16Gemm();

  const Metric metric = chooseMetric(args.metric, data);

  Matrix<std::int32_t> truth;
  onEveryRank("reading the truth", [&] {
    if (!args.truth.empty())
      truth = readTruthIds(args.truth, args.queries.empty() ? data.size() : queries.size(), args.k,
                           data.size());
  });

  t = std::chrono::steady_clock::now();
  // Searches are always exact; a graph's auto is resolved by the data's shape.
  if (*asked == GraphMethod::NnDescent && !args.queries.empty())
    throw InvalidArgument("--method nndescent builds graphs; a --queries search is exact");
  GraphMethod method = args.queries.empty()
                           ? resolveGraphMethod(*asked, data.size(), data.dim(), args.k, context)
                           : GraphMethod::Exact;
  std::vector<double> rates;
  NnDescentParams nnd;
  nnd.maxIterations = args.iters;
  nnd.sampleSize = args.sample;
  nnd.listSize = args.listSize;
  nnd.clusterSeeds = !args.noClusterSeeds;
  const NnDescentProgress onIteration = [&](int, double rate) { rates.push_back(rate); };
  auto graphOf = [&](const MatrixView<float>& rows, int k) {
    return buildKnnGraph(rows, k, metric, *asked, context, job, nnd, onIteration);
  };
  KnnResult result;
  bool merged = false;           // --extend: GGM's merge is approximate, whatever built the parts
  nlohmann::ordered_json shares; // under mpirun: each rank's rows and seconds
  if (Ranks* ranks = commandRanks()) {
    result = args.queries.empty() ? graphOnRanks(data.vectors.view(), args.k, metric, method,
                                                 context, job, nnd, shares)
                                  : searchOnRanks(queries.vectors.view(), data.vectors.view(),
                                                  args.k, metric, context, job, shares);
    if (ranks->rank() != 0)
      return kExitOk; // rank 0 writes and prints
  } else if (!args.extend.empty()) {
    // Items added to a graph: the existing one covers the first rows, the new rows get a graph
    // of their own, and GGM (GNND §5.1) merges the two.
    if (!args.queries.empty())
      throw InvalidArgument("--extend adds items to a graph; it takes no --queries");
    const KnnResult old = readKnnGraph(args.extend, data, metric, /*ofFirstRows=*/true);
    const std::int64_t n = data.size(), split = old.ids.rows();
    const MatrixView<float> added{data.vectors.view().row(split), n - split, data.dim()};
    const KnnResult fresh = graphOf(added, int(std::min<std::int64_t>(args.k, n - split - 1)));
    result = mergeKnnGraphs(data.vectors.view(), split, old.ids.view(), fresh.ids.view(), args.k,
                            metric, context, job, nnd, onIteration);
    merged = true;
  } else if (!args.queries.empty()) {
    result = knnSearch(queries.vectors.view(), data.vectors.view(), args.k, metric, context, job);
  } else {
    result = graphOf(data.vectors.view(), args.k);
    method = graphBuiltBy(result); // auto may take STEP's exact graph where the shape says not
  }
  const double knnSeconds = since(t);
  const bool exact = method == GraphMethod::Exact && !merged;
  const std::string methodLabel = std::string(graphMethodName(method)) + (merged ? "+merge" : "");

  std::optional<double> recall;
  if (!truth.empty()) {
    const MatrixView<float> q = args.queries.empty() ? data.vectors.view() : queries.vectors.view();
    recall = recallAtK(result.ids.view(), truth.view(), args.k, q, data.vectors.view(), metric);
  }

  t = std::chrono::steady_clock::now();
  job.check(); // a cancelled run writes nothing
  if (!args.out.empty()) {
    if (hasNpyExtension(args.out)) {
      writeNpy(args.out, result.ids.view());
    } else { // our graph file: ids, distances, the data's hash and how it was built
      GraphFile g;
      g.ids = result.ids;
      g.distances = result.distances;
      g.metric = metric;
      g.contentHash = data.contentHash;
      g.paramsJson = nlohmann::json({{"method", methodLabel},
                                     {"exact", exact},
                                     {"k", args.k},
                                     {"device", result.report.describe()},
                                     {"iterations", rates.size()}})
                         .dump();
      writeGraphFile(args.out, g);
    }
  }
  if (!args.outDist.empty())
    writeNpy(args.outDist, result.distances.view());
  job.check();
  outputs.commit();
  const double writeSeconds = since(t);

  if (args.common.json) {
    nlohmann::ordered_json j;
    j["mode"] = args.queries.empty() ? "graph" : "search";
    j["rows"] = result.ids.rows();
    j["base_rows"] = data.size();
    j["dim"] = data.dim();
    j["k"] = args.k;
    j["metric"] = std::string(metricName(metric));
    j["method"] = methodLabel;
    j["exact"] = exact;
    j["iterations"] = rates.size();
    j["update_rates"] = rates;
    j["backend"] = std::string(backendName(result.backend));
    j["device"] = result.report.describe();
    j["run"] = results::runReportJson(result.report);
    j["recall"] = recall ? nlohmann::json(*recall) : nlohmann::json(nullptr);
    j["fallback_rows"] = result.fallbackRows;
    j["candidates_per_row"] = result.candidatesPerRow;
    j["out"] = args.out;
    j["timings"] = {{"load_s", loadSeconds}, {"knn_s", knnSeconds}, {"write_s", writeSeconds}};
    if (const Ranks* ranks = commandRanks()) {
      j["ranks"] = ranks->size();
      j["per_rank"] = shares;
    }
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << (merged                             ? methodLabel + " kNN graph (approximate)"
                  : method == GraphMethod::NnDescent ? std::string("NN-Descent kNN graph")
                  : args.queries.empty()             ? std::string("exact kNN graph")
                                                     : std::string("exact kNN search"))
              << ": " << result.ids.rows() << " rows, k = " << args.k << ", " << metricName(metric)
              << ", " << result.report.describe() << '\n'
              << "time          " << knnSeconds << " s (load " << loadSeconds << " s)\n"
              << "candidates    " << result.candidatesPerRow << " per row re-checked, "
              << result.fallbackRows << " rows recomputed directly\n";
    for (const auto& share : shares)
      std::cout << "rank " << share["rank"].get<int>() << "        " << share["rows"] << " rows, "
                << share["seconds"] << " s computing, " << share["wait_s"] << " s waiting\n";
    if (recall)
      std::cout << "recall@" << args.k << "     " << *recall << '\n';
    if (!args.out.empty())
      std::cout << "wrote         " << args.out << (args.outDist.empty() ? "" : ", " + args.outDist)
                << '\n';
  }
  return kExitOk;
}

} // namespace

void addKnnCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<KnnArgs>();
  CLI::App* cmd = app.add_subcommand("knn", "k-nearest neighbours: the kNN graph (exact or "
                                            "NN-Descent), or an exact search of queries");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--k", args->k, "Neighbours per row")->capture_default_str();
  cmd->add_option("--metric", args->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--queries", args->queries,
                  "Query vectors (any supported format); "
                  "without: every item against the others");
  cmd->add_option("--method", args->method, "exact, nndescent or auto")->capture_default_str();
  cmd->add_option("--iters", args->iters, "NN-Descent: at most this many iterations")
      ->capture_default_str();
  cmd->add_option("--sample", args->sample,
                  "NN-Descent: NEW/OLD neighbours sampled per node and iteration (0: 2k)")
      ->check(atLeast(0))
      ->capture_default_str();
  cmd->add_option("--list-size", args->listSize,
                  "NN-Descent on a GPU: the working lists' length, k to 64 (0: 2k, at most 32); "
                  "longer lists reach further on nearly equidistant data")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->add_flag("--no-cluster-seeds", args->noClusterSeeds,
                "NN-Descent on a GPU: once the lists converge, do not propose each item's nearest "
                "in its k-means cluster and the nearest other one");
  cmd->add_option("--out", args->out,
                  "Write the result here: ids as .npy (int32, rows × k), or any other name for our "
                  "graph file (ids, distances, the data's hash, the parameters)");
  cmd->add_option("--out-dist", args->outDist, "Write distances here (.npy, float32, rows × k)");
  cmd->add_option("--truth", args->truth, "Ground-truth ids (.npy, rows × ≥k) for recall@k");
  cmd->add_option("--extend", args->extend,
                  "Add items to a graph: this graph (our graph file or ids .npy) covers the first "
                  "rows of PATH; the rest get their own graph (--method), merged by GGM");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] {
    exitCode = runGuarded([&] { return runKnn(*args); }, {args->path, args->queries});
  });
}

} // namespace nearscape::cli

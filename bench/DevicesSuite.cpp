// Several GPUs against one, in one run: the same work on the first GPU of --devices and then
// split over all of them (the engine's gpu/MultiDevice.h), timed, and the results compared.
#include "DevicesSuite.h"

#include "BenchUtil.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace nearscape::bench {
namespace {

struct DevicesArgs {
  std::string data, work = "exact-graph", devices = "all", memoryBudget, label, jsonOut;
  int k = 10, repeats = 2, nprobe = 16, ef = 64, checkRows = 2000;
  std::int64_t queries = 10000;
};

/// Rows whose ids or distances differ between two results of the same shape.
std::int64_t rowsDiffering(const KnnResult& a, const KnnResult& b) {
  std::int64_t differ = 0;
  for (std::int64_t r = 0; r < a.ids.rows(); ++r)
    differ +=
        !std::equal(a.ids.row(r), a.ids.row(r) + a.ids.cols(), b.ids.row(r)) ||
        !std::equal(a.distances.row(r), a.distances.row(r) + a.ids.cols(), b.distances.row(r));
  return differ;
}

int runDevices(const DevicesArgs& a) {
  Context all;
  all.backend = Backend::Cuda;
  logLevelFromEnvironment(all); // NEARSCAPE_LOG=debug: each run's device phases
  all.devices = parseDevices(a.devices);
  NEARSCAPE_EXPECTS(all.devices.size() >= 2,
                    "--devices names " + std::to_string(all.devices.size()) +
                        " usable GPU(s); the suite compares one with several");
  all.device = all.devices.front();
  if (!a.memoryBudget.empty())
    all.memoryBudget = parseByteSize(a.memoryBudget);
  Context one = all;
  one.devices.clear();
  { DeviceWarmUp warm(all); }
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  const MatrixView<float> x = ds.vectors.view();
  const Metric metric = ds.metric.value_or(Metric::L2);
  const std::int64_t nq = std::min<std::int64_t>(a.queries, x.rows);
  const MatrixView<float> queries{x.data, nq, x.cols}; // the first rows: a batch of real items
  const bool graphWork = a.work == "exact-graph" || a.work == "nndescent";
  const std::vector<std::int64_t> sample = [&] { // rows of the graph, or of the queries
    const std::int64_t rows = graphWork ? x.rows : nq;
    std::vector<std::int64_t> picked;
    const std::int64_t m = std::min<std::int64_t>(a.checkRows, rows);
    for (std::int64_t i = 0; i < m; ++i)
      picked.push_back(i * rows / m);
    return picked;
  }();

  // One timed run of the work on `context`: its result and seconds (the index built first,
  // outside the timing, for the searches).
  std::unique_ptr<AnnIndex> index;
  auto once = [&](const Context& context) {
    if (a.work == "exact-graph")
      return knnGraph(x, a.k, metric, context);
    if (a.work == "exact-search")
      return knnSearch(queries, x, a.k, metric, context);
    if (a.work == "nndescent")
      return nnDescentGraph(x, a.k, metric, context);
    if (a.work == "ivf")
      return index->search(queries, a.k, IvfSearchParams{a.nprobe});
    if (a.work == "graph-index")
      return index->search(queries, a.k, GraphSearchParams{a.ef, {}, {}});
    throw InvalidArgument(
        "--work must be exact-graph, exact-search, nndescent, ivf or graph-index");
  };
  struct Measured {
    KnnResult result;
    std::vector<double> seconds;
    double buildSeconds = 0;
  };
  auto measure = [&](const Context& context) {
    Measured m;
    if (a.work == "ivf" || a.work == "graph-index") {
      const auto t = std::chrono::steady_clock::now();
      index = buildIndex(x, metric,
                         a.work == "ivf" ? IndexBuildParams{IvfFlatParams{}}
                                         : IndexBuildParams{GraphIndexParams{}},
                         context);
      m.buildSeconds = secondsSince(t);
      once(context); // the replicas' first launch
    }
    for (int r = 0; r < a.repeats; ++r) {
      const auto t = std::chrono::steady_clock::now();
      m.result = once(context);
      m.seconds.push_back(secondsSince(t));
    }
    return m;
  };
  const Measured single = measure(one);
  const Measured spread = measure(all);
  const double speedup = median(single.seconds) / median(spread.seconds);
  const std::int64_t differ = rowsDiffering(single.result, spread.result);
  const MatrixView<float>& checked = graphWork ? x : queries;
  const KnnResult truth = knnReference(checked, x, a.k, metric, graphWork, sample, 0); // float64
  auto recall = [&](const KnnResult& r) {
    std::vector<std::int32_t> found;
    for (std::int64_t row : sample)
      found.insert(found.end(), r.ids.row(row), r.ids.row(row) + a.k);
    return recallAtK({found.data(), std::int64_t(sample.size()), a.k}, truth.ids.view(), a.k,
                     checked, x, metric, sample);
  };
  const double recallOne = recall(single.result), recallAll = recall(spread.result);
  const bool search = a.work == "ivf" || a.work == "graph-index" || a.work == "exact-search";
  std::ostringstream note;
  note << all.devices.size() << " GPUs " << median(spread.seconds) << " s vs 1 GPU "
       << median(single.seconds) << " s: " << speedup << "x";
  if (search)
    note << " (QPS " << double(nq) / median(spread.seconds) << " vs "
         << double(nq) / median(single.seconds) << ")";
  note << "; rows differing " << differ << " of " << single.result.ids.rows() << "; recall@" << a.k
       << " (float64, " << sample.size() << " rows) " << recallAll << " vs " << recallOne << "; "
       << spread.result.report.describe();
  printTable("one GPU against " + std::to_string(all.devices.size()) + " (" + a.work +
                 ", median of " + std::to_string(a.repeats) + ")",
             {{label + " " + a.work + " k=" + std::to_string(a.k), median(spread.seconds), "1 GPU",
               median(single.seconds), note.str()}});
  if (!a.jsonOut.empty()) {
    const nlohmann::json j = {{"suite", "devices"},
                              {"data", label},
                              {"work", a.work},
                              {"devices", all.devices},
                              {"device", describeBackend(all)},
                              {"k", a.k},
                              {"memory_budget", all.memoryBudget},
                              {"one_s", median(single.seconds)},
                              {"all_s", median(spread.seconds)},
                              {"one_runs", single.seconds},
                              {"all_runs", spread.seconds},
                              {"speedup", speedup},
                              {"queries", search ? nq : 0},
                              {"build_one_s", single.buildSeconds},
                              {"build_all_s", spread.buildSeconds},
                              {"rows_differing", differ},
                              {"recall_one", recallOne},
                              {"recall_all", recallAll},
                              {"how", spread.result.report.describe()}};
    writeJsonOutput(a.jsonOut, j, {a.data});
  }
  return 0;
}

} // namespace

void addDevicesSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<DevicesArgs>();
  CLI::App* cmd = app.add_subcommand("devices", "One GPU against several, the same work");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--work", a->work, "exact-graph, exact-search, nndescent, ivf or graph-index")
      ->capture_default_str();
  cmd->add_option("--devices", a->devices, "all, or ordinals such as 0,1")->capture_default_str();
  cmd->add_option("--memory-budget", a->memoryBudget, "e.g. 8G (NN-Descent in shards beyond it)");
  cmd->add_option("--k", a->k)->capture_default_str();
  cmd->add_option("--queries", a->queries, "Batch of a search (the data's first rows)")
      ->capture_default_str();
  cmd->add_option("--nprobe", a->nprobe)->capture_default_str();
  cmd->add_option("--ef", a->ef)->capture_default_str();
  cmd->add_option("--check-rows", a->checkRows, "Rows checked against float64")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats)->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->add_option("--json-out", a->jsonOut);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runDevices(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

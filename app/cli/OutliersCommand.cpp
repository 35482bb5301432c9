// nearscape-cli outliers: per-item outlier scores from the exact kNN graph (the distance to the
// k-th neighbour, or the local outlier factor), the most outlying items listed.
#include "Commands.h"
#include "CommonOptions.h"
#include "ResultJson.h"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct OutliersArgs {
  std::string path, metric, score = "lof", out;
  int k = 10;
  std::int64_t top = 20;
  CommonOptions common;
};

int runOutliers(const OutliersArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  OutputSet outputs; // checked now, written at the end or not at all
  addDataInput(outputs, a.path);
  outputs.addOutput(a.out);
  NEARSCAPE_EXPECTS(a.score == "kth" || a.score == "lof", "--score must be kth or lof");
  NEARSCAPE_EXPECTS(a.top >= 0, "--top must not be negative");
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openInput(a.path, options, job);
  const Metric metric = chooseMetric(a.metric, ds);
  NEARSCAPE_EXPECTS(a.k >= 1 && a.k < ds.size(),
                    "--k must lie in [1, " + std::to_string(ds.size() - 1) + "]");
  // The exact graph: scores of an approximate one would flag items whose neighbours were missed.
  // LOF counts repeated rows once (k-distinct distances), so that a group of more than k identical
  // rows does not give its neighbours scores of 1e9 and more.
  OutlierScores scored;
  if (a.score == "lof") {
    scored = distinctLocalOutlierFactor(ds.vectors.view(), a.k, metric, context, job);
  } else {
    const KnnResult graph = knnGraph(ds.vectors.view(), a.k, metric, context, job);
    scored.scores = kthNeighbourDistance(graph.distances.view(), a.k);
    scored.graph = graph.report;
    scored.distinct = ds.size();
  }
  const std::vector<float>& scores = scored.scores;
  job.check();
  if (!a.out.empty())
    writeNpy(a.out, MatrixView<float>{scores.data(), ds.size(), 1});
  outputs.commit();

  const std::vector<std::int64_t> top = topItems(scores, a.top);
  if (a.common.json) {
    nlohmann::ordered_json j =
        results::outliersJson(ds.size(), a.k, a.score, metric, scored.graph, scores, top,
                              [&ds](std::int64_t item) { return ds.labelOf(item); });
    j["out"] = a.out;
    j["distinct_rows"] = scored.distinct;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << "outlier scores (" << (a.score == "lof" ? "local outlier factor" : "k-th distance")
            << ", exact " << a.k << "-NN, " << metricName(metric) << ") of " << ds.size()
            << " items; the " << top.size() << " most outlying:\n";
  for (const std::int64_t item : top)
    std::cout << "  " << std::setw(10) << item << "  " << std::setw(12) << scores[std::size_t(item)]
              << "  " << printableText(ds.labelOf(item), 80) << '\n';
  if (!a.out.empty())
    std::cout << "wrote " << a.out << '\n';
  return kExitOk;
}

} // namespace

void addOutliersCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<OutliersArgs>();
  CLI::App* cmd = app.add_subcommand(
      "outliers", "Outlier scores from the exact kNN graph (k-th distance or local outlier "
                  "factor) and the most outlying items");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  cmd->add_option("--k", a->k, "Neighbours the scores look at")->capture_default_str();
  cmd->add_option("--score", a->score,
                  "lof (local outlier factor: ~1 inside a cluster, above 1 when less dense "
                  "than the neighbours) or kth (distance to the k-th neighbour)")
      ->capture_default_str();
  cmd->add_option("--top", a->top, "How many of the most outlying items to list")
      ->capture_default_str();
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--out", a->out, "Write every item's score here (.npy, float32, n × 1)");
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] {
    exitCode = runGuarded([&] { return runOutliers(*a); }, {a->path, std::string()});
  });
}

} // namespace nearscape::cli

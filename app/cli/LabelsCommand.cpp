// nearscape-cli labels: the explorer's cluster labels without a GUI — clusters of the map at a few
// granularities, each named by the most distinctive words of a text column.
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct LabelsArgs {
  std::string path, meta, column, map, metric;
  std::vector<int> clusters = {8, 24, 64};
  int words = 3, k = 15, epochs = 0;
  CommonOptions common;
};

/// The map the labels sit on: --map's positions (n × 2 or 3), else the explorer's layout of the
/// kNN graph, computed as `layout` computes it.
Matrix<float> labelledMap(const LabelsArgs& a, const Dataset& ds, const Context& context,
                          JobControl& job) {
  if (!a.map.empty()) {
    Matrix<float> map = readNpyFloat(a.map);
    if (map.rows() != ds.size() || (map.cols() != 2 && map.cols() != 3))
      throw InvalidArgument(a.map + ": the map is " + std::to_string(map.rows()) + " × " +
                            std::to_string(map.cols()) + ", the data has " +
                            std::to_string(ds.size()) + " items (a map is n × 2 or n × 3)");
    return map;
  }
  NEARSCAPE_EXPECTS(ds.size() >= 2, "a map needs at least two items (or give one with --map)");
  ExploreParams params;
  params.metric = chooseMetric(a.metric, ds);
  params.k = int(std::min<std::int64_t>(a.k, ds.size() - 1));
  params.neighbours = false;
  params.forest = false;
  params.layout.dim = 2;
  params.layout.epochs = a.epochs;
  return explore(ds.vectors.view(), params, context, job).map;
}

nlohmann::ordered_json labelsJson(const ClusterLabels& labels) {
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  for (const ClusterLabelLevel& level : labels.levels) {
    nlohmann::ordered_json clusters = nlohmann::ordered_json::array();
    for (const ClusterLabel& label : level.labels)
      clusters.push_back({{"size", label.size},
                          {"centre", label.centre},
                          {"centre_item", label.centreItem},
                          {"words", label.words},
                          {"scores", label.scores}});
    levels.push_back({{"clusters", level.clusters}, {"labels", clusters}});
  }
  return levels;
}

int runLabels(const LabelsArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  const auto started = std::chrono::steady_clock::now();
  OpenOptions options;
  options.metaPath = a.meta;
  options.loadThumbnails = false;
  const Dataset ds = openInput(a.path, options, job);
  std::string column = a.column;
  if (column.empty()) {
    const int c = defaultLabelColumn(ds);
    if (c < 0)
      throw InvalidArgument("the data has no text column to label clusters with: name one with "
                            "--column (and its metadata file with --meta)");
    column = ds.metadata.columnNames[std::size_t(c)];
  }
  const std::vector<std::string> texts = labelTexts(ds, column);
  const Matrix<float> map = labelledMap(a, ds, context, job);
  ClusterLabelParams params;
  params.granularities = a.clusters;
  params.wordsPerLabel = a.words;
  const ClusterLabels labels = clusterLabels(map.view(), texts, params, context, job);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (a.common.json) {
    nlohmann::ordered_json j;
    j["rows"] = ds.size();
    j["column"] = column;
    j["map"] = a.map.empty() ? nlohmann::ordered_json("computed") : nlohmann::ordered_json(a.map);
    j["dim"] = map.cols();
    j["levels"] = labelsJson(labels);
    j["timings"] = {{"total_s", seconds}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << "cluster labels of " << ds.size() << " items from column "
            << printableText(column, 80) << " (" << seconds << " s)\n";
  for (const ClusterLabelLevel& level : labels.levels) {
    std::cout << level.clusters << " clusters:\n";
    for (const ClusterLabel& label : level.labels) {
      std::cout << "  " << label.size << " items at (";
      for (std::size_t c = 0; c < label.centre.size(); ++c)
        std::cout << (c ? ", " : "") << label.centre[c];
      std::cout << "):";
      for (const std::string& w : label.words)
        std::cout << ' ' << printableText(w, 40);
      std::cout << '\n';
    }
  }
  return kExitOk;
}

} // namespace

void addLabelsCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<LabelsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "labels", "Clusters of the map named by the most distinctive words of a text column");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  cmd->add_option("--meta", a->meta, "Metadata TSV (default: the <stem>.meta.tsv sidecar)");
  cmd->add_option("--column", a->column,
                  "Text column whose words name the clusters (default: the data's text column)");
  cmd->add_option("--map", a->map,
                  "Map positions (.npy, n × 2 or 3, as layout --out writes); laid out when absent");
  cmd->add_option("--clusters", a->clusters, "Clusters per level, coarse to fine")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--words", a->words, "Words per label")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  cmd->add_option("--k", a->k, "Neighbours per item of the graph the map is laid out from")
      ->capture_default_str()
      ->check(atLeast(1));
  cmd->add_option("--epochs", a->epochs, "Layout epochs (0: as layout chooses)")->check(atLeast(0));
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] {
    exitCode = runGuarded([&] { return runLabels(*a); }, {a->path, std::string()});
  });
}

} // namespace nearscape::cli

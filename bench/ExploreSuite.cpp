// The GUI's pipeline timed headless: what a person waits for between opening a file and a
// refined map with paths ready, on this machine's backend.
#include "ExploreSuite.h"

#include "BenchUtil.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace nearscape::bench {
namespace {

struct ExploreArgs {
  std::string data, label, jsonOut, backend = "auto";
  int k = 15, dim = 2, repeats = 3;
};

int runExplore(const ExploreArgs& a) {
  Context context;
  const auto parsed = parseBackend(a.backend);
  NEARSCAPE_EXPECTS(parsed.has_value(), "--backend must be auto, cpu or cuda");
  context.backend = *parsed;
  logLevelFromEnvironment(context);
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  // The parameters MainWindow uses on opening a file (Preferences' defaults: k = 15, a 2D map,
  // the neighbours index and the forest); the live-layout hook is the GUI's and costs a copy.
  ExploreParams params;
  params.k = a.k;
  params.layout.dim = a.dim;
  params.layout.reportEvery = 5;
  // As the GUI does: the device starts while the first file is read.
  DeviceWarmUp warmUp(context);
  std::vector<double> total, open, graph, neighbours, start, map, forest;
  std::string graphHow;
  for (int r = 0; r < a.repeats; ++r) {
    const auto t = std::chrono::steady_clock::now();
    OpenOptions options;
    options.loadThumbnails = false;
    const Dataset ds = openDataset(a.data, options);
    open.push_back(secondsSince(t));
    params.k = int(std::min<std::int64_t>(a.k, ds.size() - 1));
    ExploreStages stages;
    std::size_t copied = 0;
    std::vector<float> live;
    stages.onLayout = [&](const MatrixView<float>& xy, double) {
      live.assign(xy.data, xy.data + xy.rows * xy.cols); // what the GUI's map receives
      ++copied;
    };
    const Exploration e = explore(ds.vectors.view(), params, context, noJobControl(), stages);
    total.push_back(secondsSince(t));
    graph.push_back(e.seconds.graph);
    neighbours.push_back(e.seconds.neighbours);
    start.push_back(e.seconds.start);
    map.push_back(e.seconds.map);
    forest.push_back(e.seconds.forest);
    graphHow = e.graph.report.describe();
    std::cout << "run " << r + 1 << ": " << total.back() << " s (open " << open.back() << ", graph "
              << graph.back() << ", neighbours " << neighbours.back() << ", PCA " << start.back()
              << ", map " << map.back() << " with " << copied << " live updates, forest "
              << forest.back() << ")\n";
  }
  std::ostringstream note;
  note << "open " << median(open) << " s, graph " << median(graph) << " s (" << graphHow
       << "), neighbours " << median(neighbours) << " s, PCA " << median(start) << " s, map "
       << median(map) << " s, forest " << median(forest) << " s; first run " << total.front()
       << " s (device start included)";
  printTable("explore pipeline, open → map → paths ready (median of " + std::to_string(a.repeats) +
                 ", " + describeBackend(context) + ")",
             {{label + " k=" + std::to_string(params.k), median(total), "none", 0, note.str()}});
  if (!a.jsonOut.empty()) {
    const nlohmann::json j = {{"suite", "explore"},
                              {"data", label},
                              {"backend", describeBackend(context)},
                              {"k", params.k},
                              {"dim", a.dim},
                              {"total_s", median(total)},
                              {"total_runs", total},
                              {"open_s", median(open)},
                              {"graph_s", median(graph)},
                              {"graph", graphHow},
                              {"neighbours_s", median(neighbours)},
                              {"pca_s", median(start)},
                              {"map_s", median(map)},
                              {"forest_s", median(forest)}};
    writeJsonOutput(a.jsonOut, j, {a.data});
  }
  return 0;
}

} // namespace

void addExploreSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<ExploreArgs>();
  CLI::App* cmd =
      app.add_subcommand("explore", "The GUI's pipeline headless: open → graph → map → forest");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--k", a->k, "Graph neighbours (the GUI's default)")->capture_default_str();
  cmd->add_option("--dim", a->dim)->capture_default_str();
  cmd->add_option("--repeats", a->repeats)->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->add_option("--json-out", a->jsonOut);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runExplore(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

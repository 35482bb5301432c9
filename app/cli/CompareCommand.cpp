// nearscape-cli compare: two embeddings of the same items, compared by their neighbourhoods —
// per item, the share of its exact k-NN in A that are also its exact k-NN in B.
#include "Commands.h"
#include "CommonOptions.h"
#include "ResultJson.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct CompareArgs {
  std::string a, b, metricA, metricB, out, mapA, mapB;
  int k = 10;
  std::int64_t top = 20;
  CommonOptions common;
};

int runCompare(const CompareArgs& args) {
  const Context context = args.common.context();
  JobControl& job = commandJob();
  OutputSet outputs;
  addDataInput(outputs, args.a);
  addDataInput(outputs, args.b);
  outputs.addOutput(args.out);
  outputs.addOutput(args.mapA);
  outputs.addOutput(args.mapB);
  NEARSCAPE_EXPECTS(args.top >= 0, "--top must not be negative");
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset a = openInput(args.a, options, job);
  const Dataset b = openInput(args.b, options, job);
  // Each file checked under its own name: the engine's message says only "the data".
  requireFinite(a.vectors.view(), args.a + ": the data");
  requireFinite(b.vectors.view(), args.b + ": the data");
  if (a.size() != b.size())
    throw InvalidArgument(args.a + " has " + std::to_string(a.size()) + " items and " + args.b +
                          " has " + std::to_string(b.size()) +
                          ": two embeddings of the same items have as many rows");
  NEARSCAPE_EXPECTS(args.k >= 1 && args.k < a.size(),
                    "--k must lie in [1, " + std::to_string(a.size() - 1) + "]");
  // Each space with its own metric (and dimension): exact neighbourhoods on both sides.
  const Metric metricA = chooseMetric(args.metricA, a), metricB = chooseMetric(args.metricB, b);
  const int maps = int(!args.mapA.empty()) + int(!args.mapB.empty());
  const double graphsShare = maps == 0 ? 1.0 : 0.7;
  JobControl first = job.sub(0.0, graphsShare / 2), second = job.sub(graphsShare / 2, graphsShare);
  const KnnResult ga = knnGraph(a.vectors.view(), args.k, metricA, context, first);
  const KnnResult gb = knnGraph(b.vectors.view(), args.k, metricB, context, second);
  const std::vector<float> overlap = neighbourhoodOverlap(ga.ids.view(), gb.ids.view(), args.k);
  job.check();
  if (!args.out.empty())
    writeNpy(args.out, MatrixView<float>{overlap.data(), a.size(), 1});
  // Each space's own 2D map, laid out from its exact graph (the explorer's maps side by side).
  int mapped = 0;
  auto writeMap = [&](const Dataset& data, const KnnResult& graph, Metric metric,
                      const std::string& path) {
    if (path.empty())
      return;
    ExploreParams params;
    params.metric = metric;
    params.k = args.k;
    params.neighbours = false;
    params.forest = false;
    params.layout.dim = 2;
    ExploreStages given;
    given.graph = [&graph](const Exploration&) { return std::optional<KnnResult>(graph); };
    const double from = graphsShare + (1 - graphsShare) * mapped / maps;
    JobControl stage = job.sub(from, from + (1 - graphsShare) / maps);
    ++mapped;
    const Exploration e = explore(data.vectors.view(), params, context, stage, given);
    writeNpy(path, e.map.view());
  };
  writeMap(a, ga, metricA, args.mapA);
  writeMap(b, gb, metricB, args.mapB);
  outputs.commit();

  const results::OverlapSummary summary = results::summariseOverlap(overlap, args.k, args.top);
  const double mean = summary.mean;
  const std::vector<std::int64_t>& histogram = summary.histogram; // items by shared neighbours
  const std::vector<std::int64_t>& changed = summary.mostChanged; // the least overlap first
  if (args.common.json) {
    nlohmann::ordered_json j =
        results::compareJson(a.size(), args.k, metricA, metricB, overlap, summary,
                             [&a](std::int64_t item) { return a.labelOf(item); });
    j["out"] = args.out;
    j["map_a"] = args.mapA;
    j["map_b"] = args.mapB;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << a.size() << " items: on average " << std::setprecision(4) << 100 * mean
            << "% of an item's exact " << args.k << "-NN in A (" << metricName(metricA)
            << ") are its " << args.k << "-NN in B (" << metricName(metricB) << ")\n";
  for (int shared = 0; shared <= args.k; ++shared)
    std::cout << "  " << std::setw(3) << shared << " shared  " << std::setw(10)
              << histogram[std::size_t(shared)] << " items\n";
  std::cout << "the " << changed.size() << " items whose neighbourhoods changed most:\n";
  for (const std::int64_t item : changed)
    std::cout << "  " << std::setw(10) << item << "  " << std::setw(6) << overlap[std::size_t(item)]
              << "  " << printableText(a.labelOf(item), 80) << '\n';
  for (const std::string* path : {&args.out, &args.mapA, &args.mapB})
    if (!path->empty())
      std::cout << "wrote " << *path << '\n';
  return kExitOk;
}

} // namespace

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Two embeddings of the same items: per item, the share of its exact k-NN that "
                 "both spaces agree on; the items whose neighbourhoods changed most");
  cmd->add_option("a", args->a, "The first embedding (data file or IDX folder)")->required();
  cmd->add_option("b", args->b, "The second embedding of the same items, row for row")->required();
  cmd->add_option("--k", args->k, "Neighbours compared")->capture_default_str();
  cmd->add_option("--metric-a", args->metricA,
                  "l2, ip or cos for A (default: the file's, else l2)");
  cmd->add_option("--metric-b", args->metricB,
                  "l2, ip or cos for B (default: the file's, else l2)");
  cmd->add_option("--top", args->top, "How many of the most changed items to list")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write every item's overlap here (.npy, float32, n × 1)");
  cmd->add_option(
      "--map-a", args->mapA,
      "Write A's own 2D map here (.npy, float32, n × 2; laid out from its exact graph)");
  cmd->add_option("--map-b", args->mapB,
                  "Write B's own 2D map here, as the explorer shows it beside A's");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] {
    // No input named for "the data": two files share that phrase, runCompare names each.
    exitCode = runGuarded([&] { return runCompare(*args); });
  });
}

} // namespace nearscape::cli

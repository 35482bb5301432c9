// nearscape-cli self-test: a short check of this machine's install — every reader on a generated
// set, the exact graph on the CPU (and the GPU when one is usable) against the float64 reference,
// a min-max path and a map. One PASS/FAIL/SKIP line per check; exit 1 when any fails.
#include "Commands.h"
#include "CommonOptions.h"
#include "SelfTestData.h"
#include "VersionText.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include <unistd.h>

namespace nearscape::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kGraphK = 10;

struct Check {
  std::string name, status, detail;
  double seconds = 0;
};

/// A check's outcome: nothing is a skip with its reason in `detail`; else pass or fail.
struct Outcome {
  bool passed = true;
  std::string detail;
  bool skipped = false;
};

class Checks {
public:
  explicit Checks(bool json) : m_json(json) {}

  void run(const std::string& name, const std::function<Outcome()>& body) {
    const auto start = std::chrono::steady_clock::now();
    Check check{name, "PASS", ""};
    try {
      const Outcome outcome = body();
      check.detail = outcome.detail;
      check.status = outcome.skipped ? "SKIP" : outcome.passed ? "PASS" : "FAIL";
    } catch (const std::exception& e) {
      check.status = "FAIL";
      check.detail = e.what();
    }
    check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!m_json)
      std::cout << check.status << "  " << check.name
                << (check.detail.empty() ? "" : ": " + check.detail) << '\n'
                << std::flush;
    m_checks.push_back(check);
  }

  int failures() const {
    int n = 0;
    for (const Check& c : m_checks)
      n += c.status == "FAIL";
    return n;
  }
  const std::vector<Check>& all() const { return m_checks; }

private:
  bool m_json;
  std::vector<Check> m_checks;
};

Outcome sameValues(const Dataset& ds, const Matrix<float>& expected) {
  if (ds.size() != expected.rows() || ds.dim() != expected.cols())
    return {false, "read " + std::to_string(ds.size()) + " x " + std::to_string(ds.dim()) +
                       ", wrote " + std::to_string(expected.rows()) + " x " +
                       std::to_string(expected.cols())};
  for (std::int64_t i = 0; i < expected.rows(); ++i)
    for (std::int64_t j = 0; j < expected.cols(); ++j)
      if (ds.vectors.row(i)[j] != expected.row(i)[j])
        return {false, "row " + std::to_string(i + 1) + ", column " + std::to_string(j + 1) +
                           " reads " + std::to_string(ds.vectors.row(i)[j]) + ", wrote " +
                           std::to_string(expected.row(i)[j])};
  return {true, std::to_string(ds.size()) + " x " + std::to_string(ds.dim()) + ", exact"};
}

Outcome graphAgainstReference(const Matrix<float>& data, const KnnResult& reference,
                              Backend backend, std::optional<KnnResult>& keep) {
  Context context;
  context.backend = backend;
  KnnResult got = knnGraph(data.view(), kGraphK, Metric::L2, context, commandJob());
  const std::string difference = compareWithReference(got, reference);
  const std::string where = got.report.describe();
  keep = std::move(got);
  if (!difference.empty())
    return {false, where + ": " + difference};
  return {true, where + ", k = " + std::to_string(kGraphK) + ", equal to the float64 reference"};
}

/// The min-max path between two items of different clusters (the clusters' graphs joined by
/// bridge edges, as `path --bridge`): found, from end to end, its bottleneck no larger than the
/// shortest path's (which is a path too); the forest the same on the CPU and the default backend.
Outcome pathCheck(const Matrix<float>& data, const KnnResult& graphResult, std::int32_t from,
                  std::int32_t to) {
  ExploreParams params; // the forest as `path --bridge` builds it
  params.neighbours = false;
  params.map = false;
  params.bridge = true;
  ExploreStages stages;
  stages.graph = [&](const Exploration&) { return std::optional<KnnResult>(graphResult); };
  const Exploration explored = explore(data.view(), params, Context{}, commandJob(), stages);
  const UndirectedGraph& graph = explored.undirected;
  const SpanningForest& forest = *explored.forest;
  Context cpu;
  cpu.backend = Backend::Cpu;
  const SpanningForest cpuForest(graph, cpu, commandJob());
  if (std::abs(forest.totalWeight() - cpuForest.totalWeight()) >
      1e-6 * std::max(1.0, cpuForest.totalWeight()))
    return {false,
            forest.builtOn() + " and " + cpuForest.builtOn() + " disagree on the forest's weight"};
  const GraphPath minimax = minimaxPath(forest, from, to);
  const GraphPath shortest = shortestPath(graph, from, to);
  if (!minimax.found() || !shortest.found())
    return {false, "no path between " + std::to_string(from) + " and " + std::to_string(to) +
                       " once the components are bridged"};
  if (minimax.nodes.front() != from || minimax.nodes.back() != to ||
      minimax.steps.size() + 1 != minimax.nodes.size())
    return {false,
            "the path does not run from " + std::to_string(from) + " to " + std::to_string(to)};
  if (minimax.bottleneck > shortest.bottleneck * (1 + 1e-6f))
    return {false, "bottleneck " + std::to_string(minimax.bottleneck) +
                       " above the shortest path's " + std::to_string(shortest.bottleneck)};
  return {true, std::to_string(minimax.nodes.size()) + " items, bottleneck " +
                    std::to_string(minimax.bottleneck) + ", forest on " + forest.builtOn()};
}

/// The map keeps the clusters apart: nearly every item's nearest map neighbours share its
/// cluster (well-separated clusters; a broken layout scatters them).
Outcome mapCheck(const Matrix<float>& data, const KnnResult& graph, const SelfTestSet& set) {
  ExploreParams params; // the map as `layout` draws it, its PCA fitted on every item
  params.neighbours = false;
  params.forest = false;
  params.pca = PcaParams{};
  ExploreStages stages;
  stages.graph = [&](const Exploration&) { return std::optional<KnnResult>(graph); };
  const Matrix<float> map = explore(data.view(), params, Context{}, commandJob(), stages).map;
  for (std::int64_t i = 0; i < map.rows() * map.cols(); ++i)
    if (!std::isfinite(map.data()[i]))
      return {false, "a position is not finite"};
  const Matrix<std::int32_t> near = mapNeighbours(map.view(), kGraphK);
  std::int64_t same = 0;
  for (std::int64_t i = 0; i < near.rows(); ++i)
    for (std::int64_t j = 0; j < near.cols(); ++j)
      same += set.cluster[std::size_t(near.row(i)[j])] == set.cluster[std::size_t(i)];
  const double share = double(same) / double(near.rows() * near.cols());
  const std::string detail = "2D, " + std::to_string(int(std::round(share * 100))) +
                             "% of map neighbours in the item's own cluster (at least 90%)";
  return {share >= 0.9, detail};
}

int runSelfTest(bool json) {
  Checks checks(json);
  if (!json)
    std::cout << app::versionText("nearscape-cli") << std::endl;
  const fs::path folder =
      fs::temp_directory_path() / ("nearscape-self-test-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const SelfTestSet set = makeSelfTestSet();
  const Matrix<float> data = set.asFloat();

  std::vector<SelfTestFile> files;
  checks.run("write the test set", [&] {
    files = writeSelfTestFiles(set, folder);
    return Outcome{true, std::to_string(files.size()) + " files in " + folder.string()};
  });
  for (const SelfTestFile& file : files)
    checks.run("read " + file.format, [&] {
      OpenOptions options;
      options.loadThumbnails = false;
      return sameValues(openDataset(file.path, options, commandJob()), data);
    });

  const KnnResult reference = knnReference(data.view(), data.view(), kGraphK, Metric::L2, true);
  std::optional<KnnResult> cpuGraph, gpuGraph;
  checks.run("exact graph on the CPU",
             [&] { return graphAgainstReference(data, reference, Backend::Cpu, cpuGraph); });
  const DeviceInfo device = queryDevice(0);
  checks.run("exact graph on the GPU", [&] {
    if (!device.usable)
      return Outcome{true, "no usable GPU: " + device.reason, true};
    return graphAgainstReference(data, reference, Backend::Cuda, gpuGraph);
  });
  if (cpuGraph) {
    checks.run("min-max path",
               [&] { return pathCheck(data, *cpuGraph, 0, SelfTestSet::kRows - 1); });
    checks.run("map", [&] { return mapCheck(data, *cpuGraph, set); });
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);

  const int failed = checks.failures();
  if (json) {
    nlohmann::ordered_json j;
    j["version"] = engineVersion();
    j["commit"] = app::buildCommit();
    j["gpu_usable"] = device.usable;
    j["gpu"] = device.usable ? device.name : "";
    j["gpu_reason"] = device.reason;
    j["checks"] = nlohmann::json::array();
    for (const Check& c : checks.all())
      j["checks"].push_back(
          {{"name", c.name}, {"status", c.status}, {"detail", c.detail}, {"seconds", c.seconds}});
    j["passed"] = failed == 0;
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << (failed == 0 ? "self-test passed"
                              : "self-test FAILED: " + std::to_string(failed) + " check(s)")
              << '\n';
  }
  return failed == 0 ? kExitOk : kExitFailure;
}

} // namespace

void addSelfTestCommand(CLI::App& app, int& exitCode) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "self-test", "Check this install: every reader, the exact graph on the CPU and the GPU "
                   "against a float64 reference, a path and a map");
  cmd->add_flag("--json", *json, "Print the results as JSON");
  cmd->callback(
      [json, &exitCode] { exitCode = runGuarded([json] { return runSelfTest(*json); }); });
}

} // namespace nearscape::cli

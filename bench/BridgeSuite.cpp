// nearscape-bench bridge: the component join of issue 42 (1M × 64 in 50 components took 11 GB
// and more than 7.5 minutes, then). Data: seeded blobs made here, the recipe of make-data's
// blobs (centres N(0, 4²) per coordinate, points centre + N(0, 1)) with as many centres as
// components. The graph is each blob's rows in a chain (true distances): its components are the
// blobs, which is all the join reads, and it costs nothing to build at 1M. The peer is the exact
// join (every member of every component against every row: what the join promised before) at
// sizes where it finishes; the figures are the join's time, peak memory, and its bridges'
// lengths against the exact ones.
#include "BridgeSuite.h"

#include "BenchUtil.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

namespace nearscape::bench {
namespace {

struct BridgeArgs {
  std::int64_t rows = 1'000'000;
  int dim = 64, components = 50, threads = 0;
  std::uint64_t seed = 42;
  bool peer = false;
  std::string jsonOut;
};

/// The process's peak resident memory so far (VmHWM), in bytes; 0 where /proc is missing.
std::uint64_t peakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      std::uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  return 0;
}

struct Timed {
  ComponentBridges bridges;
  double seconds = 0;
};

Timed join(const UndirectedGraph& g, const MatrixView<float>& x, const Context& context,
           const CrossNearestParams& params) {
  const auto t = std::chrono::steady_clock::now();
  Timed r;
  r.bridges = bridgeComponents(g, nearestOutside(x, Metric::L2, context, params));
  r.seconds = secondsSince(t);
  return r;
}

int runBridge(const BridgeArgs& a) {
  NEARSCAPE_EXPECTS(a.rows >= a.components && a.components >= 2 && a.dim >= 1,
                    "--rows must be at least --components, which must be at least 2");
  Context context;
  context.backend = Backend::Cpu;
  context.threads = a.threads;
  logLevelFromEnvironment(context);
  std::mt19937_64 rng(a.seed);
  std::normal_distribution<float> normal;
  std::vector<float> centres(std::size_t(a.components) * std::size_t(a.dim));
  for (float& v : centres)
    v = 4.0f * normal(rng);
  std::vector<float> data(std::size_t(a.rows) * std::size_t(a.dim));
  std::vector<std::int32_t> blob(std::size_t(a.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    blob[std::size_t(i)] = std::int32_t(rng() % std::uint64_t(a.components));
    const float* c = centres.data() + std::size_t(blob[std::size_t(i)]) * std::size_t(a.dim);
    for (int j = 0; j < a.dim; ++j)
      data[std::size_t(i) * std::size_t(a.dim) + std::size_t(j)] = c[j] + normal(rng);
  }
  const MatrixView<float> x{data.data(), a.rows, a.dim};
  std::vector<std::int64_t> last(std::size_t(a.components), -1);
  std::vector<WeightedEdge> chain;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::int64_t& prev = last[std::size_t(blob[std::size_t(i)])];
    if (prev >= 0)
      chain.push_back({std::int32_t(prev), std::int32_t(i),
                       float(exactDistance(x.row(prev), x.row(i), a.dim, Metric::L2))});
    prev = i;
  }
  const UndirectedGraph g = graphFromEdges(a.rows, chain);
  const std::int32_t components = connectedComponents(g).count;
  const std::uint64_t before = peakRssBytes();

  const Timed ours = join(g, x, context, {});
  const std::uint64_t peak = peakRssBytes();
  NEARSCAPE_EXPECTS(connectedComponents(withEdges(g, ours.bridges.edges)).count == 1,
                    "the join left the graph disconnected");
  for (const WeightedEdge& e : ours.bridges.edges) {
    const double d = exactDistance(x.row(e.a), x.row(e.b), a.dim, Metric::L2);
    NEARSCAPE_EXPECTS(std::abs(e.weight - d) <= 1e-5 * std::max(1.0, d),
                      "a bridge's weight is not its pair's distance");
  }
  double oursTotal = 0;
  for (const WeightedEdge& e : ours.bridges.edges)
    oursTotal += e.weight;
  std::vector<Row> rows;
  rows.push_back({"join " + std::to_string(components) + " components: seconds", ours.seconds, "",
                  0, ours.bridges.exact ? "exact" : "mutually nearest pairs"});
  rows.push_back(
      {"peak RSS, GB (data and graph before: " + std::to_string(double(before) / 1e9) + ")",
       double(peak) / 1e9, "", 0, ""});
  nlohmann::json j = {{"suite", "bridge"},
                      {"rows", a.rows},
                      {"dim", a.dim},
                      {"components", components},
                      {"threads", effectiveThreads(context)},
                      {"device", "CPU"},
                      {"seconds", ours.seconds},
                      {"peak_rss_bytes", peak},
                      {"peak_rss_before_bytes", before},
                      {"bridges", ours.bridges.edges.size()},
                      {"exact", ours.bridges.exact},
                      {"total_weight", oursTotal}};
  if (a.peer) {
    CrossNearestParams exact;
    exact.exactPairs = std::numeric_limits<std::int64_t>::max();
    const Timed peer = join(g, x, context, exact);
    double peerTotal = 0;
    for (const WeightedEdge& e : peer.bridges.edges)
      peerTotal += e.weight;
    rows.push_back({"join: seconds", ours.seconds, "exact join", peer.seconds, ""});
    rows.push_back({"bridges' total length", oursTotal, "exact join", peerTotal,
                    "the exact join's forest is the minimum"});
    j["peer"] = {{"name", "exact join"},
                 {"seconds", peer.seconds},
                 {"total_weight", peerTotal},
                 {"peak_rss_bytes", peakRssBytes()}};
  }
  printTable("component join: blobs " + std::to_string(a.rows) + " x " + std::to_string(a.dim),
             rows);
  if (!a.jsonOut.empty())
    writeJsonOutput(a.jsonOut, j, {});
  return 0;
}

} // namespace

void addBridgeSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<BridgeArgs>();
  CLI::App* cmd = app.add_subcommand("bridge", "Joining a graph's components (path --bridge)");
  cmd->add_option("--rows", a->rows)->capture_default_str();
  cmd->add_option("--dim", a->dim)->capture_default_str();
  cmd->add_option("--components", a->components)->capture_default_str();
  cmd->add_option("--seed", a->seed)->capture_default_str();
  cmd->add_option("--threads", a->threads);
  cmd->add_flag("--peer", a->peer, "Also run the exact join (n² distances: small data only)");
  cmd->add_option("--json", a->jsonOut, "Write the figures as JSON");
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runBridge(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

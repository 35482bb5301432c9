#include "IndexSuite.h"

#include "BenchUtil.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace nearscape::bench {
namespace {

struct IndexArgs {
  std::string data, queries, label, jsonOut, kind = "graph", peer = "none", backend = "auto";
  std::vector<std::string> build;
  std::string values, peerValues;
  int k = 10, threads = 0;
  std::int64_t holdout = 10000;
  double target = 0.995;
  std::string nlistPeer = "0";
  std::string python = "/usr/bin/python3";
  std::string peersDir = NEARSCAPE_PEERS_DIR;
};

struct Point {
  std::string setting;
  double recall = 0, qps = 0;
};

/// The best QPS among points with recall ≥ target (0 when none reaches it).
double qpsAt(const std::vector<Point>& points, double target) {
  double best = 0;
  for (const Point& p : points)
    if (p.recall >= target)
      best = std::max(best, p.qps);
  return best;
}

std::vector<double> numbers(const std::string& list) {
  std::vector<double> v;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');)
    v.push_back(std::stod(item));
  return v;
}

int runIndex(const IndexArgs& a) {
  Context context;
  context.threads = a.threads;
  context.backend = *parseBackend(a.backend);
  logLevelFromEnvironment(context);
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  const Metric metric = ds.metric.value_or(Metric::L2);

  // Queries (a file, or rows held out of the data), the exact truth (timed: the exact row of
  // the comparison), the index and its sweep: the engine's pipeline, as the CLI and GUI run it.
  Dataset qds;
  std::optional<MatrixView<float>> givenQueries;
  if (!a.queries.empty()) {
    qds = openDataset(a.queries, options);
    givenQueries = qds.vectors.view();
  }
  HeldOutSweepOptions pipeline;
  pipeline.metric = metric;
  pipeline.holdout = a.holdout;
  pipeline.holdoutSeed = 99;
  ParameterValues build;
  for (const std::string& b : a.build) {
    const auto eq = b.find('=');
    build[b.substr(0, eq)] = std::stod(b.substr(eq + 1));
  }
  pipeline.build = parseIndexBuildParams(a.kind, build);
  pipeline.sweep.k = a.k;
  pipeline.sweep.latencyQueries = 500;
  const std::string knob = a.kind == "graph" ? "ef" : "nprobe";
  for (double v : numbers(a.values))
    pipeline.sweep.grid.push_back({{knob, v}});
  HeldOutSweepStages stages;
  stages.onRow = [&](const SweepRow& r) {
    std::cout << "  ours  " << std::left << std::setw(14) << formatParameters(r.params)
              << std::right << " recall " << std::fixed << std::setprecision(4) << r.recall
              << "  qps " << std::setprecision(0) << std::setw(10) << r.qps << "  p50 "
              << std::setprecision(3) << r.p50Ms << " ms  p99 " << r.p99Ms << " ms" << std::endl;
  };
  std::cout << "\n" << label << ": " << a.kind << " index, k = " << a.k << "\n";
  const HeldOutSweep sweep =
      heldOutSweep(ds.vectors.view(), givenQueries, pipeline, context, noJobControl(), stages);
  const MatrixView<float> base = sweep.base, queries = sweep.queries;
  const Matrix<std::int32_t>& truth = sweep.truth;
  const double exactSeconds = sweep.truthSeconds;
  const AnnIndex* index = sweep.index.get();
  std::cout << "  built " << formatParameters(index->buildValues()) << " on "
            << backendName(index->backend()) << " in " << index->buildSeconds() << " s; "
            << queries.rows << " queries vs " << base.rows << "\n";
  std::vector<Point> ours;
  for (const SweepRow& r : sweep.rows)
    ours.push_back({formatParameters(r.params), r.recall, r.qps});

  std::vector<Point> theirs;
  double peerBuild = 0;
  std::string peerName = "none";
  if (a.peer != "none") {
    const std::string dir =
        (std::filesystem::temp_directory_path() / "nearscape-bench" / "ann-peer").string();
    const std::string baseFile = writeTemporaryNpy(base, "ann-base.npy");
    const std::string queryFile = writeTemporaryNpy(queries, "ann-queries.npy");
    std::ostringstream cmd;
    const auto threads = effectiveThreads(context);
    const int nlist = std::stoi(a.nlistPeer) > 0 ? std::stoi(a.nlistPeer)
                      : a.kind == "ivf" ? *std::get<IvfFlatParams>(index->buildParams()).nlist
                                        : 1024;
    cmd << a.python << " " << a.peersDir << "/ann_sweep.py " << a.peer << " " << baseFile << " "
        << queryFile << " " << dir << " --k " << a.k << " --values " << a.peerValues
        << " --threads " << threads << " --nlist " << nlist << " --metric " << metricName(metric);
    const nlohmann::json p = runPeer(cmd.str());
    peerName = p.at("peer").get<std::string>();
    peerBuild = p.at("build_s").get<double>();
    for (const auto& row : p.at("rows")) {
      const Matrix<std::int64_t> ids64 = readNpyIds(row.at("ids").get<std::string>());
      std::vector<std::int32_t> ids(std::size_t(ids64.rows() * ids64.cols()));
      for (std::size_t i = 0; i < ids.size(); ++i)
        ids[i] = std::int32_t(ids64.data()[i]);
      const double recall = recallAtK({ids.data(), ids64.rows(), ids64.cols()}, truth.view(), a.k,
                                      queries, base, metric);
      const double qps = double(queries.rows) / row.at("seconds").get<double>();
      theirs.push_back(
          {(a.peer == "hnsw" ? "ef=" : "nprobe=") + std::to_string(row.at("value").get<int>()),
           recall, qps});
      std::cout << "  peer  " << std::left << std::setw(14) << theirs.back().setting << std::right
                << " recall " << std::fixed << std::setprecision(4) << recall << "  qps "
                << std::setprecision(0) << std::setw(10) << qps << std::endl;
    }
    std::filesystem::remove(baseFile);
    std::filesystem::remove(queryFile);
  }
  std::cout.unsetf(std::ios::floatfield);
  std::cout << std::setprecision(6);

  const double oursAt = qpsAt(ours, a.target), theirsAt = qpsAt(theirs, a.target);
  std::vector<Row> table;
  std::ostringstream note;
  note << "QPS at recall ≥ " << a.target << ": ours " << oursAt << ", peer " << theirsAt
       << "; exact search " << double(queries.rows) / exactSeconds << " QPS";
  table.push_back(
      {label + " " + a.kind + " build", index->buildSeconds(), peerName, peerBuild, ""});
  table.push_back({label + " 1/QPS at recall target", oursAt > 0 ? 1.0 / oursAt : 0, peerName,
                   theirsAt > 0 ? 1.0 / theirsAt : 0, note.str()});
  printTable("ANN index sweep (" + describeBackend(context) + ")", table);
  if (!a.jsonOut.empty()) {
    auto points = [](const std::vector<Point>& v) {
      nlohmann::json j = nlohmann::json::array();
      for (const Point& p : v)
        j.push_back({{"setting", p.setting}, {"recall", p.recall}, {"qps", p.qps}});
      return j;
    };
    nlohmann::json j = {{"suite", "index"},
                        {"data", label},
                        {"kind", a.kind},
                        {"backend", std::string(backendName(index->backend()))},
                        {"build", index->buildValues()},
                        {"build_s", index->buildSeconds()},
                        {"ours", points(ours)},
                        {"peer", peerName},
                        {"peer_build_s", peerBuild},
                        {"theirs", points(theirs)},
                        {"target", a.target},
                        {"ours_qps_at", oursAt},
                        {"peer_qps_at", theirsAt},
                        {"exact_s", exactSeconds}};
    writeJsonOutput(a.jsonOut, j, {a.data, a.queries});
  }
  return 0;
}

} // namespace

void addIndexSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<IndexArgs>();
  CLI::App* cmd = app.add_subcommand(
      "index", "ANN index sweep vs hnswlib / Faiss IVF-Flat and our exact search");
  cmd->add_option("--data", a->data, "Base data: any format nearscape reads")->required();
  cmd->add_option("--queries", a->queries, "Queries; without, --holdout rows of the data");
  cmd->add_option("--holdout", a->holdout)->capture_default_str();
  cmd->add_option("--index", a->kind, "graph or ivf")->capture_default_str();
  cmd->add_option("--build", a->build, "NAME=VALUE build parameters (repeatable)");
  cmd->add_option("--values", a->values, "Our sweep values (ef or nprobe), comma-separated")
      ->required();
  cmd->add_option("--peer", a->peer, "hnsw, ivf or none")->capture_default_str();
  cmd->add_option("--peer-values", a->peerValues, "The peer's ef or nprobe values");
  cmd->add_option("--peer-nlist", a->nlistPeer, "Faiss nlist (default: ours, else 1024)");
  cmd->add_option("--target", a->target, "Recall at which QPS is compared")->capture_default_str();
  cmd->add_option("--k", a->k)->capture_default_str();
  cmd->add_option("--threads", a->threads)->capture_default_str();
  cmd->add_option("--backend", a->backend)->capture_default_str();
  cmd->add_option("--python", a->python)->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir)->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->add_option("--json", a->jsonOut, "Write the results as JSON here");
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runIndex(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

// The exact kNN suite: verify against float64 first, then time ours and the peer interleaved.
#include "ExactSuite.h"

#include "BenchUtil.h"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace nearscape::bench {
namespace {

struct ExactArgs {
  std::string data, queries, metric = "l2", peer = "faiss", jsonOut, label;
  std::vector<int> ks = {10};
  int repeats = 3;
  std::int64_t checkRows = 1000;
  std::string backend = "auto";
  int threads = 0;
  std::string python = "/usr/bin/python3";
  std::string peersDir = NEARSCAPE_PEERS_DIR;
  bool resident = false;    ///< search: the base kept in an ExactKnnIndex, its build timed apart
  ExactKnnParams params;    ///< tiles (0: the backend's choice)
  std::string memoryBudget; ///< e.g. "256M": the GPU streams the base from host memory beyond it
};

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

int runExact(const ExactArgs& a) {
  Context context;
  context.backend = parseBackend(a.backend).value_or(Backend::Auto);
  context.threads = a.threads;
  logLevelFromEnvironment(context);
  if (!a.memoryBudget.empty())
    context.memoryBudget = parseByteSize(a.memoryBudget);
  const Metric metric = parseMetric(a.metric).value_or(Metric::L2);
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset base = openDataset(a.data, options);
  Dataset queries;
  const bool graph = a.queries.empty();
  if (!graph)
    queries = openDataset(a.queries, options);
  const MatrixView<float> b = base.vectors.view();
  const MatrixView<float> q = graph ? b : queries.vectors.view();
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;

  std::string peerBase, peerQueries;
  if (a.peer != "none") {
    peerBase = writeTemporaryNpy(b, "base.npy");
    if (!graph)
      peerQueries = writeTemporaryNpy(q, "queries.npy");
  }

  nlohmann::json records = nlohmann::json::array();
  std::vector<Row> table;
  // --resident: the base uploaded (and, where it pays, clustered) once, as the peers' GPU
  // figures assume; the first search builds what the index keeps, so it is not timed.
  std::unique_ptr<ExactKnnIndex> index;
  if (a.resident && !graph)
    index = std::make_unique<ExactKnnIndex>(b, metric, context);
  auto run = [&](int k) {
    return index   ? index->search(q, k)
           : graph ? knnGraph(b, k, metric, context, noJobControl(), a.params)
                   : knnSearch(q, b, k, metric, context, noJobControl(), a.params);
  };
  for (const int k : a.ks) {
    // 1. Correctness: compare with float64 on every row (small data) or a seeded sample.
    const KnnResult first = run(k);
    const auto rows = seededSample(q.rows, a.checkRows, 1234);
    const KnnResult ref = knnReference(q, b, k, metric, graph, rows);
    const std::string mismatch = compareWithReference(first, ref, rows);
    if (!mismatch.empty()) {
      std::cerr << "nearscape-bench: NOT EXACT on " << label << " k=" << k << ": " << mismatch
                << '\n';
      return 1;
    }
    // 2. Timing, interleaved with the peer: ours, theirs, ours, theirs...
    std::vector<double> ours, theirs;
    std::string peerName = a.peer;
    for (int r = 0; r < a.repeats; ++r) {
      const KnnResult res = run(k);
      ours.push_back(res.seconds);
      if (a.peer == "none")
        continue;
      std::ostringstream cmd;
      if (a.peer == "faiss") {
        cmd << a.python << " " << a.peersDir << "/faiss_exact.py " << peerBase << " " << k
            << " --metric " << (metric == Metric::InnerProduct ? "ip" : "l2");
        if (a.threads > 0)
          cmd << " --threads " << a.threads;
      } else { // torch-fp32, torch-tf32, torch-fp16
        cmd << a.python << " " << a.peersDir << "/torch_exact.py " << peerBase << " " << k
            << " --repeats 1 --precision " << a.peer.substr(a.peer.find('-') + 1);
      }
      if (!graph)
        cmd << " --queries " << peerQueries;
      const nlohmann::json p = runPeer(cmd.str());
      theirs.push_back(p.at("seconds").get<double>());
      peerName = p.at("peer").get<std::string>();
    }
    const double oursMedian = median(ours), theirsMedian = median(theirs);
    const double flops = 2.0 * double(q.rows) * double(b.rows) * double(b.cols);
    std::ostringstream note;
    note << "exact on " << rows.size() << " rows; " << first.candidatesPerRow << " cand/row; "
         << first.fallbackRows << " direct; " << first.report.describe();
    table.push_back({label +
                         (graph   ? " graph"
                          : index ? " resident search"
                                  : " search") +
                         " k=" + std::to_string(k),
                     oursMedian, peerName, theirsMedian, note.str()});
    records.push_back(
        {{"suite", "exact"},
         {"mode", graph   ? "graph"
                  : index ? "resident search"
                          : "search"},
         {"data", label},
         {"rows", q.rows},
         {"base_rows", b.rows},
         {"dim", b.cols},
         {"k", k},
         {"metric", std::string(metricName(metric))},
         {"device", first.report.describe()},
         {"ours_s", oursMedian},
         {"ours_runs", ours},
         {"peer", peerName},
         {"peer_s", theirs.empty() ? nlohmann::json(nullptr) : nlohmann::json(theirsMedian)},
         {"peer_runs", theirs},
         {"ratio",
          theirs.empty() ? nlohmann::json(nullptr) : nlohmann::json(oursMedian / theirsMedian)},
         {"gemm_flop", flops},
         {"verified_rows", rows.size()},
         {"candidates_per_row", first.candidatesPerRow},
         {"fallback_rows", first.fallbackRows},
         {"date", today()}});
  }
  printTable("exact kNN (median of " + std::to_string(a.repeats) + ", interleaved with the peer)",
             table);
  if (!a.jsonOut.empty()) {
    writeJsonOutput(a.jsonOut, records, {a.data, a.queries});
    std::cout << "wrote " << a.jsonOut << '\n';
  }
  if (!peerBase.empty())
    std::filesystem::remove(peerBase);
  if (!peerQueries.empty())
    std::filesystem::remove(peerQueries);
  return 0;
}

struct TopkArgs {
  std::string data, queries, label, jsonOut;
  std::vector<int> ks = {10, 100, 1000, 100000};
  int queryCount = 50;
  std::string python = "python3";
  std::string peersDir = NEARSCAPE_PEERS_DIR;
  std::string backend = "auto";
};

/// One query at a time against a resident base (the GUI's click): median latency per query.
int runTopk(const TopkArgs& a) {
  Context context;
  context.backend = parseBackend(a.backend).value_or(Backend::Auto);
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset base = openDataset(a.data, options);
  const Dataset all = openDataset(a.queries, options);
  const std::int64_t nq = std::min<std::int64_t>(a.queryCount, all.size());
  const MatrixView<float> q{all.vectors.data(), nq, all.dim()};
  const ExactKnnIndex index(base.vectors.view(), Metric::L2, context);
  const std::string label =
      a.label.empty() ? std::filesystem::path(a.data).filename().string() : a.label;
  const std::string peerBase = writeTemporaryNpy(base.vectors.view(), "topk-base.npy");
  const std::string peerQueries = writeTemporaryNpy(q, "topk-queries.npy");
  std::vector<Row> table;
  nlohmann::json records = nlohmann::json::array();
  for (const int k : a.ks) {
    if (k > base.size())
      continue;
    // Correct first: every query against float64.
    const KnnResult checked = index.search(q, k);
    const KnnResult ref = knnReference(q, base.vectors.view(), k, Metric::L2, false);
    const std::string mismatch = compareWithReference(checked, ref);
    if (!mismatch.empty()) {
      std::cerr << "nearscape-bench: NOT EXACT, top-" << k << ": " << mismatch << '\n';
      return 1;
    }
    std::vector<double> times;
    for (std::int64_t i = 0; i < nq; ++i) {
      const KnnResult one = index.search({q.row(i), 1, q.cols}, k);
      times.push_back(one.seconds);
    }
    double theirs = 0;
    if (a.python != "none") {
      std::ostringstream cmd;
      cmd << a.python << " " << a.peersDir << "/torch_topk.py " << peerBase << " " << peerQueries
          << " " << k;
      theirs = runPeer(cmd.str()).at("seconds").get<double>();
    }
    std::ostringstream note;
    note << "exact on " << nq << " queries; " << checked.candidatesPerRow << " cand/query; "
         << checked.report.describe();
    table.push_back({label + " one query, top-" + std::to_string(k), median(times), "torch", theirs,
                     note.str()});
    records.push_back({{"suite", "topk"},
                       {"data", label},
                       {"k", k},
                       {"ours_s", median(times)},
                       {"peer", "torch"},
                       {"peer_s", theirs},
                       {"device", checked.report.describe()},
                       {"candidates_per_query", checked.candidatesPerRow},
                       {"date", today()}});
  }
  printTable("single-query top-k against a resident base (median per query)", table);
  if (!a.jsonOut.empty())
    writeJsonOutput(a.jsonOut, records, {a.data, a.queries});
  std::filesystem::remove(peerBase);
  std::filesystem::remove(peerQueries);
  return 0;
}

} // namespace

void addTopkSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<TopkArgs>();
  CLI::App* cmd = app.add_subcommand("topk", "One query at a time, any k, against a resident base");
  cmd->add_option("--data", a->data, "Base")->required();
  cmd->add_option("--queries", a->queries, "Queries (the first --count are used)")->required();
  cmd->add_option("--k", a->ks, "k values")->delimiter(',')->capture_default_str();
  cmd->add_option("--count", a->queryCount)->capture_default_str();
  cmd->add_option("--python", a->python, "Python running the torch peer, or none")
      ->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir)->capture_default_str();
  cmd->add_option("--backend", a->backend)->capture_default_str();
  cmd->add_option("--label", a->label);
  cmd->add_option("--json-out", a->jsonOut);
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runTopk(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

void addExactSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<ExactArgs>();
  CLI::App* cmd = app.add_subcommand("exact", "Exact kNN graph (or --queries search) vs a peer");
  cmd->add_option("--data", a->data, "Data: any format nearscape reads")->required();
  cmd->add_option("--queries", a->queries, "Queries: a search instead of the graph");
  cmd->add_option("--k", a->ks, "k values")->delimiter(',')->capture_default_str();
  cmd->add_option("--metric", a->metric, "l2, ip or cos")->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Timed runs of each side")->capture_default_str();
  cmd->add_option("--peer", a->peer, "faiss, torch-fp32, torch-tf32, torch-fp16 or none")
      ->capture_default_str();
  cmd->add_option("--check-rows", a->checkRows, "Rows verified against float64")
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads for both sides (0 = all)");
  cmd->add_option("--python", a->python, "Python running the peer")->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir, "Folder of the peer scripts")->capture_default_str();
  cmd->add_option("--label", a->label, "Name of the data in the table");
  cmd->add_option("--json-out", a->jsonOut, "Write the records here");
  cmd->add_option("--memory-budget", a->memoryBudget,
                  "Working-memory budget, e.g. 256M (GPU: the base streamed in chunks beyond it)");
  cmd->add_option("--query-tile", a->params.queryTile, "Query rows per tile (0: the backend's)");
  cmd->add_option("--base-tile", a->params.baseTile, "Base rows per tile (0: the backend's)");
  cmd->add_flag("--no-fused-tiles{false}", a->params.fusedTiles,
                "GPU: every float16 tile through cuBLAS and the filter (the code before the "
                "fused kernel; A/B)");
  cmd->add_flag("--no-paired-sweeps{false}", a->params.pairedSweeps,
                "GPU: a graph's fused sweeps score every row against every column, each pair "
                "twice (the code before the paired sweeps; A/B)");
  cmd->add_flag("--resident", a->resident,
                "Search: keep the base in an index (built once, not timed), as GPU peers do");
  cmd->callback([a, &exitCode] {
    try {
      exitCode = runExact(*a);
    } catch (const std::exception& e) {
      std::cerr << "nearscape-bench: " << e.what() << '\n';
      exitCode = 1;
    }
  });
}

} // namespace nearscape::bench

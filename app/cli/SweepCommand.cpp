// nearscape-cli sweep: build an ANN index on the data, sweep its search parameters, measure
// recall@k / QPS / latency for each setting against exact ground truth, and print the front.
#include "Commands.h"
#include "CommonOptions.h"

#include "nearscape/io/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace nearscape::cli {
namespace {

struct SweepArgs {
  std::string path, queries, truth, out, metric, kind = "graph", saveIndex, loadIndex;
  std::vector<std::string> build, grid;
  int k = 10;
  std::int64_t holdout = 1000, batch = 0, latencyQueries = 200, missedQuery = 0;
  int timingRuns = 3;
  CommonOptions common;
};

/// "name=v1,v2,…" → (name, values). Throws InvalidArgument.
std::pair<std::string, std::vector<double>> parseAssignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InvalidArgument("expected NAME=VALUE[,VALUE…], got '" + text + "'");
  std::vector<double> values;
  std::stringstream list(text.substr(eq + 1));
  for (std::string item; std::getline(list, item, ',');) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty())
      throw InvalidArgument("'" + item + "' in '" + text + "' is not a number");
    values.push_back(v);
  }
  return {text.substr(0, eq), values};
}

/// Most search settings one sweep measures: each is a full pass over the queries.
constexpr std::size_t kMaxGridSettings = 10000;

/// The cartesian product of every --grid assignment, refused before it is built when it holds
/// more than kMaxGridSettings settings. Throws InvalidArgument.
std::vector<ParameterValues> gridOf(const std::vector<std::string>& assignments) {
  std::vector<std::pair<std::string, std::vector<double>>> parsed;
  std::size_t settings = 1;
  for (const std::string& a : assignments) {
    parsed.push_back(parseAssignment(a));
    settings *= std::max<std::size_t>(1, parsed.back().second.size());
    if (settings > kMaxGridSettings)
      throw InvalidArgument("--grid asks for more than " + std::to_string(kMaxGridSettings) +
                            " search settings; sweep fewer values");
  }
  std::vector<ParameterValues> grid = {{}};
  for (const auto& [name, values] : parsed) {
    std::vector<ParameterValues> next;
    for (const ParameterValues& g : grid)
      for (double v : values) {
        ParameterValues p = g;
        p[name] = v;
        next.push_back(p);
      }
    grid = next;
  }
  return assignments.empty() ? std::vector<ParameterValues>{} : grid;
}

std::string describeRow(const SweepRow& r) {
  std::ostringstream s;
  s << std::left << std::setw(24) << formatParameters(r.params) << std::right << std::fixed
    << std::setprecision(4) << " recall " << r.recall << std::setprecision(0) << "  qps "
    << std::setw(9) << r.qps << std::setprecision(3) << "  p50 " << r.p50Ms << " ms  p99 "
    << r.p99Ms << " ms";
  return s.str();
}

int runSweepCommand(const SweepArgs& args) {
  const Context context = args.common.context();
  JobControl& job = commandJob();
  // Outputs (the rows and the saved index) are checked now and land together at the end: a
  // cancelled or failed sweep leaves neither.
  OutputSet outputs;
  for (const std::string& input : {args.path, args.queries})
    if (!input.empty())
      addDataInput(outputs, input);
  outputs.addInput(args.truth);
  outputs.addInput(args.loadIndex);
  outputs.addOutput(args.out);
  outputs.addOutput(args.saveIndex);
  // Bad names and values fail before any work (ranges depend on the data: checked at build).
  const std::vector<ParameterValues> grid = gridOf(args.grid);
  for (const ParameterValues& setting : grid)
    (void)parseIndexSearchParams(args.kind, setting);
  HeldOutSweepOptions options;
  ParameterValues build;
  for (const std::string& b : args.build) {
    const auto [name, values] = parseAssignment(b);
    NEARSCAPE_EXPECTS(values.size() == 1, "--build takes one value per parameter: " + b);
    build[name] = values.front();
  }
  options.build = parseIndexBuildParams(args.kind, build);
  options.holdout = args.holdout;
  options.sweep.k = args.k;
  options.sweep.grid = grid;
  options.sweep.batchSize = args.batch;
  options.sweep.latencyQueries = args.latencyQueries;
  options.sweep.timingRuns = args.timingRuns;
  options.sweep.missedQuery = args.missedQuery;
  OpenOptions open;
  open.loadThumbnails = false;
  const Dataset data = openInput(args.path, open, job);
  options.metric = chooseMetric(args.metric, data);
  Dataset queryData;
  std::optional<MatrixView<float>> queries; // without: a seeded sample held out of the base
  if (!args.queries.empty()) {
    queryData = openInput(args.queries, open, job);
    queries = queryData.vectors.view();
  }

  HeldOutSweepStages stages;
  if (!args.truth.empty())
    stages.truth = [&](const MatrixView<float>& q, const MatrixView<float>& base) {
      return readTruthIds(args.truth, q.rows, args.k, base.rows);
    };
  // A held-out base is our copy, not the file: its hash is the file's plus the hold-out.
  const std::string baseHash =
      data.contentHash +
      (queries ? ""
               : "/holdout=" + std::to_string(std::min(args.holdout, data.size() / 2)) +
                     ",seed=" + std::to_string(context.seed));
  stages.index = [&](const MatrixView<float>& base, JobControl& stage) {
    std::unique_ptr<AnnIndex> index =
        args.loadIndex.empty() ? buildIndex(base, options.metric, options.build, context, stage)
                               : loadIndex(args.loadIndex, base, baseHash, context);
    if (!args.saveIndex.empty())
      index->save(args.saveIndex, baseHash);
    if (!args.common.json)
      std::cout << index->kind() << " index over " << base.rows << " × " << base.cols << " ("
                << metricName(options.metric) << ", " << backendName(index->backend())
                << "), built in " << index->buildSeconds() << " s with "
                << formatParameters(index->buildValues()) << "; k = " << args.k << '\n';
    return index;
  };
  stages.onRow = [&](const SweepRow& r) {
    if (!args.common.json)
      std::cout << describeRow(r) << std::endl; // streamed as measured
  };
  const HeldOutSweep sweep =
      heldOutSweep(data.vectors.view(), queries, options, context, job, stages);
  const std::vector<SweepRow>& rows = sweep.rows;
  const AnnIndex& index = *sweep.index;

  job.check(); // a cancelled sweep writes nothing
  if (!args.out.empty()) {
    const std::string csv = sweepCsv(rows);
    writeFileAtomically(args.out, [&](std::FILE* f) {
      if (std::fwrite(csv.data(), 1, csv.size(), f) != csv.size())
        throw IoError(args.out + ": write failed");
    });
  }
  outputs.commit();
  if (args.common.json) {
    nlohmann::ordered_json j;
    j["index"] = std::string(index.kind());
    j["build"] = index.buildValues();
    j["backend"] = std::string(backendName(index.backend()));
    j["metric"] = std::string(metricName(options.metric));
    j["base_rows"] = sweep.base.rows;
    j["queries"] = sweep.queries.rows;
    j["k"] = args.k;
    j["bytes"] = index.bytes();
    nlohmann::json out = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      std::vector<std::int64_t> missed;
      for (std::int32_t id : r.missed)
        missed.push_back(sweep.dataRow(id));
      out.push_back({{"params", r.params},
                     {"recall", r.recall},
                     {"qps", r.qps},
                     {"p50_ms", r.p50Ms},
                     {"p99_ms", r.p99Ms},
                     {"pareto", r.pareto},
                     {"missed", missed}});
    }
    j["rows"] = out;
    j["timings"] = {{"truth_s", sweep.truthSeconds}, {"build_s", sweep.indexSeconds}};
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << "Pareto front (recall vs QPS):\n";
    for (const SweepRow& r : rows)
      if (r.pareto)
        std::cout << "  " << describeRow(r) << '\n';
    if (!args.out.empty())
      std::cout << "wrote " << args.out << '\n';
  }
  return kExitOk;
}

} // namespace

void addSweepCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Build an ANN index and sweep its search parameters: recall@k, QPS, latency, "
               "and the recall/QPS Pareto front");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--index", args->kind, "graph or ivf")->capture_default_str();
  cmd->add_option("--k", args->k, "Neighbours per query")->capture_default_str();
  cmd->add_option("--metric", args->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--queries", args->queries,
                  "Query vectors; without, --holdout rows of the data (seeded) serve as queries "
                  "and are left out of the index");
  cmd->add_option("--holdout", args->holdout, "Rows held out as queries when no --queries")
      ->capture_default_str();
  cmd->add_option("--truth", args->truth,
                  "Ground-truth ids (.npy, queries × ≥k); without, our "
                  "exact search computes them");
  cmd->add_option("--out", args->out, "Write the rows here as CSV");
  cmd->add_option("--build", args->build,
                  "A build parameter, NAME=VALUE (graph: degree, build_k; ivf: nlist, "
                  "iterations, kmeans_pp); repeatable");
  cmd->add_option("--grid", args->grid,
                  "Search values to sweep, NAME=V1,V2,… (graph: ef, degree, entries; ivf: "
                  "nprobe); repeatable for a product; default: the index's accuracy knob");
  cmd->add_option("--batch", args->batch, "Queries per search call for QPS (0: all at once)")
      ->capture_default_str();
  cmd->add_option("--timing-runs", args->timingRuns,
                  "Timed passes per setting after a warm-up; QPS is the best (ann-benchmarks)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--latency-queries", args->latencyQueries,
                  "Queries timed one at a time for p50/p99")
      ->capture_default_str();
  cmd->add_option("--missed-query", args->missedQuery,
                  "The query whose missed true neighbours each row lists (--json)")
      ->capture_default_str();
  cmd->add_option("--save-index", args->saveIndex, "Save the built index here");
  cmd->add_option("--load-index", args->loadIndex, "Load this index instead of building one");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] {
    exitCode = runGuarded([&] { return runSweepCommand(*args); }, {args->path, args->queries});
  });
}

} // namespace nearscape::cli

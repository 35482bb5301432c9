// nearscape-cli sweep: build an ANN index on the data (or several: a trade-off study), sweep
// its search parameters, measure recall@k / QPS / latency for each setting against exact ground
// truth, time the exact search on the same queries as the reference, and print the fronts.
#include "Commands.h"
#include "CommonOptions.h"

#include "nearscape/io/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace nearscape::cli {
namespace {

struct SweepArgs {
  std::string path, queries, truth, out, metric, kind = "graph", saveIndex, loadIndex;
  std::vector<std::string> build, grid, runs;
  bool kindGiven = false; ///< --index was on the command line
  bool noExact = false;
  int k = 10;
  std::int64_t holdout = 0, batch = 0, latencyQueries = 200, missedQuery = 0; ///< 0: default
  int timingRuns = 3;
  double minTimedSeconds = 0.2;
  CommonOptions common;
};

/// One index to build in a study: its kind and build values by name.
struct RunSpec {
  std::string kind;
  ParameterValues build;
};

/// Most runs one command builds: each is a whole index build and sweep.
constexpr std::size_t kMaxRuns = 64;

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

/// The cartesian product of `--build NAME=V1,V2,…` assignments: one build per combination.
/// Throws InvalidArgument (a repeated name, more than kMaxRuns builds).
std::vector<ParameterValues> buildsOf(const std::vector<std::string>& assignments) {
  std::vector<ParameterValues> builds = {{}};
  for (const std::string& a : assignments) {
    const auto [name, values] = parseAssignment(a);
    NEARSCAPE_EXPECTS(!builds.front().count(name), "--build names '" + name + "' twice");
    NEARSCAPE_EXPECTS(builds.size() * values.size() <= kMaxRuns, "--build asks for more than " +
                                                                     std::to_string(kMaxRuns) +
                                                                     " builds; give fewer values");
    std::vector<ParameterValues> next;
    for (const ParameterValues& b : builds)
      for (double v : values) {
        ParameterValues p = b;
        p[name] = v;
        next.push_back(p);
      }
    builds = next;
  }
  return builds;
}

/// `KIND[:NAME=V,NAME=V…]` (one value per name) → a run. Throws InvalidArgument.
RunSpec parseRun(const std::string& text) {
  RunSpec run;
  const auto colon = text.find(':');
  run.kind = text.substr(0, colon);
  if (colon != std::string::npos) {
    std::stringstream list(text.substr(colon + 1));
    for (std::string item; std::getline(list, item, ',');) {
      const auto [name, values] = parseAssignment(item);
      NEARSCAPE_EXPECTS(values.size() == 1 && !run.build.count(name),
                        "--run '" + text + "': give each build parameter once, with one value");
      run.build[name] = values.front();
    }
  }
  (void)parseIndexBuildParams(run.kind, run.build); // an unknown kind or name fails now
  return run;
}

/// The runs the command line asks for: each `--run`, or `--index` with each combination of the
/// `--build` values. Throws InvalidArgument.
std::vector<RunSpec> runsOf(const SweepArgs& args) {
  std::vector<RunSpec> runs;
  if (!args.runs.empty()) {
    NEARSCAPE_EXPECTS(args.build.empty() && !args.kindGiven,
                      "--run names its own index and build values: leave out --index and --build");
    NEARSCAPE_EXPECTS(args.runs.size() <= kMaxRuns,
                      "more than " + std::to_string(kMaxRuns) + " runs; give fewer");
    for (const std::string& r : args.runs)
      runs.push_back(parseRun(r));
    return runs;
  }
  for (const ParameterValues& build : buildsOf(args.build)) {
    (void)parseIndexBuildParams(args.kind, build);
    runs.push_back({args.kind, build});
  }
  return runs;
}

/// Each kind's search grid: the product of the `--grid` assignments naming its own search
/// parameters (empty: the kind's default grid). An assignment no run's kind knows is refused
/// (with the first kind's message). Throws InvalidArgument.
std::map<std::string, std::vector<ParameterValues>>
gridsOf(const std::vector<std::string>& assignments, const std::vector<RunSpec>& runs) {
  std::map<std::string, std::vector<std::string>> mine;
  for (const RunSpec& run : runs)
    mine[run.kind];
  for (const std::string& a : assignments) {
    const auto [name, values] = parseAssignment(a);
    std::optional<InvalidArgument> refused;
    bool taken = false;
    for (auto& [kind, list] : mine) {
      try {
        (void)parseIndexSearchParams(kind, {{name, values.front()}});
        list.push_back(a);
        taken = true;
      } catch (const InvalidArgument& e) {
        if (!refused)
          refused = e;
      }
    }
    if (!taken)
      throw *refused;
  }
  std::map<std::string, std::vector<ParameterValues>> grids;
  for (const auto& [kind, list] : mine) {
    grids[kind] = gridOf(list);
    for (const ParameterValues& setting : grids[kind])
      (void)parseIndexSearchParams(kind, setting);
  }
  return grids;
}

std::string describeRow(const SweepRow& r) {
  std::ostringstream s;
  s << std::left << std::setw(24) << formatParameters(r.params) << std::right << std::fixed
    << std::setprecision(4) << " recall " << r.recall << std::setprecision(0) << "  qps "
    << std::setw(9) << r.qps << std::setprecision(3) << "  p50 " << r.p50Ms << " ms  p99 "
    << r.p99Ms << " ms";
  return s.str();
}

nlohmann::json rowJson(const SweepRow& r, const HeldOutSweep& split) {
  std::vector<std::int64_t> missed;
  for (std::int32_t id : r.missed)
    missed.push_back(split.dataRow(id));
  return {{"params", r.params}, {"recall", r.recall}, {"qps", r.qps},
          {"p50_ms", r.p50Ms},  {"p99_ms", r.p99Ms},  {"pareto", r.pareto},
          {"missed", missed},   {"passes", r.passes}, {"timed_s", r.timedSeconds},
          {"where", r.where}};
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
  const std::vector<RunSpec> runs = runsOf(args);
  const std::map<std::string, std::vector<ParameterValues>> grids = gridsOf(args.grid, runs);
  for (const auto& [kind, grid] : grids) { // ef below k: said once, before the rows
    std::string note;
    (void)effectiveSweepGrid(grid, args.k, &note);
    if (!note.empty())
      std::cerr << "nearscape-cli: note: " << note << '\n';
  }
  NEARSCAPE_EXPECTS(runs.size() == 1 || (args.saveIndex.empty() && args.loadIndex.empty()),
                    "--save-index and --load-index take one index; this study builds " +
                        std::to_string(runs.size()));
  HeldOutSweepOptions options;
  options.holdout = args.holdout;
  options.sweep.k = args.k;
  options.sweep.batchSize = args.batch;
  options.sweep.latencyQueries = args.latencyQueries;
  options.sweep.timingRuns = args.timingRuns;
  options.sweep.minTimedSeconds = args.minTimedSeconds;
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

  // A held-out base is our copy, not the file: its hash is the file's plus the hold-out.
  const std::string baseHash =
      data.contentHash +
      (queries ? ""
               : "/holdout=" + std::to_string(holdoutCount(args.holdout, data.size())) +
                     ",seed=" + std::to_string(context.seed));
  const bool several = runs.size() > 1;
  SweepStudy study;
  study.k = args.k;
  HeldOutSweep first; // the first run: its split (every run's) names the misses' data rows
  std::vector<std::pair<double, double>> seconds;  // each run's truth and index seconds
  std::optional<Matrix<std::int32_t>> sharedTruth; // the first run's, for the others
  for (std::size_t r = 0; r < runs.size(); ++r) {
    options.build = parseIndexBuildParams(runs[r].kind, runs[r].build);
    options.sweep.grid = grids.at(runs[r].kind);
    options.exactReference = r == 0 && !args.noExact; // once: every run has the same queries
    HeldOutSweepStages stages;
    if (sharedTruth)
      stages.truth = [&](const MatrixView<float>&, const MatrixView<float>&) {
        return *sharedTruth; // copies share the storage
      };
    else if (!args.truth.empty())
      stages.truth = [&](const MatrixView<float>& q, const MatrixView<float>& base) {
        return readTruthIds(args.truth, q.rows, args.k, base.rows);
      };
    JobControl runJob =
        job.sub(double(r) / double(runs.size()), double(r + 1) / double(runs.size()));
    stages.index = [&](const MatrixView<float>& base, JobControl& stage) {
      std::unique_ptr<AnnIndex> index =
          args.loadIndex.empty() ? buildIndex(base, options.metric, options.build, context, stage)
                                 : loadIndex(args.loadIndex, base, baseHash, context);
      if (!args.saveIndex.empty())
        index->save(args.saveIndex, baseHash);
      if (!args.common.json)
        std::cout << (several ? "run " + std::to_string(r + 1) + ": " : std::string())
                  << index->kind() << " index over " << base.rows << " × " << base.cols << " ("
                  << metricName(options.metric) << ", " << backendName(index->backend())
                  << "), built in " << index->buildSeconds() << " s with "
                  << formatParameters(index->buildValues()) << "; k = " << args.k << '\n';
      return index;
    };
    stages.onRow = [&](const SweepRow& row) {
      if (!args.common.json)
        std::cout << describeRow(row) << std::endl; // streamed as measured
    };
    HeldOutSweep sweep =
        heldOutSweep(data.vectors.view(), queries, options, context, runJob, stages);
    if (!sharedTruth && several)
      sharedTruth = sweep.truth;
    if (sweep.exact) {
      study.exact = sweep.exact;
      study.exactBackend = std::string(backendName(sweep.exactBackend));
    }
    study.queries = sweep.queries.rows;
    study.runs.push_back(sweepRunOf(sweep));
    seconds.emplace_back(sweep.truthSeconds, sweep.indexSeconds);
    sweep.index.reset(); // the next run's index takes its memory
    if (r == 0)
      first = std::move(sweep);
  }

  job.check(); // a cancelled sweep writes nothing
  if (!args.out.empty()) {
    const std::string csv = sweepStudyCsv(study);
    writeFileAtomically(args.out, [&](std::FILE* f) {
      if (std::fwrite(csv.data(), 1, csv.size(), f) != csv.size())
        throw IoError(args.out + ": write failed");
    });
  }
  outputs.commit();
  const std::vector<std::vector<bool>> overall = overallParetoFront(study);
  if (args.common.json) {
    // The first run at the top level (as a one-index sweep prints it), every run in `runs`.
    const SweepRun& firstRun = study.runs.front();
    nlohmann::ordered_json j;
    j["index"] = firstRun.kind;
    j["build"] = firstRun.build;
    j["backend"] = firstRun.backend;
    j["metric"] = std::string(metricName(options.metric));
    j["base_rows"] = first.base.rows;
    j["queries"] = first.queries.rows;
    j["k"] = args.k;
    j["bytes"] = firstRun.rows.empty() ? 0 : firstRun.rows.front().bytes;
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t r = 0; r < study.runs.size(); ++r) {
      const SweepRun& run = study.runs[r];
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i = 0; i < run.rows.size(); ++i) {
        nlohmann::json row = rowJson(run.rows[i], first);
        row["pareto_all"] = bool(overall[r][i]);
        rows.push_back(row);
      }
      all.push_back({{"run", r + 1},
                     {"index", run.kind},
                     {"label", run.label()},
                     {"build", run.build},
                     {"backend", run.backend},
                     {"build_s", run.rows.empty() ? 0.0 : run.rows.front().buildSeconds},
                     {"bytes", run.rows.empty() ? 0 : run.rows.front().bytes},
                     {"timings", {{"truth_s", seconds[r].first}, {"build_s", seconds[r].second}}},
                     {"rows", rows}});
    }
    j["rows"] = all.front()["rows"];
    j["runs"] = all;
    if (study.exact)
      j["exact"] = {{"recall", study.exact->recall},        {"qps", study.exact->qps},
                    {"p50_ms", study.exact->p50Ms},         {"p99_ms", study.exact->p99Ms},
                    {"build_s", study.exact->buildSeconds}, {"backend", study.exactBackend},
                    {"where", study.exact->where},          {"passes", study.exact->passes},
                    {"timed_s", study.exact->timedSeconds}};
    else
      j["exact"] = nullptr;
    j["timings"] = {{"truth_s", first.truthSeconds}, {"build_s", first.indexSeconds}};
    std::cout << j.dump(2) << '\n';
  } else {
    if (study.exact)
      std::cout << "exact search (" << study.exact->where
                << ", the reference): " << describeRow(*study.exact) << '\n';
    for (std::size_t r = 0; r < study.runs.size(); ++r) {
      const SweepRun& run = study.runs[r];
      std::cout << (several ? "Pareto front of run " + std::to_string(r + 1) + " (" + run.label() +
                                  ", recall vs QPS):\n"
                            : std::string("Pareto front (recall vs QPS):\n"));
      for (const SweepRow& row : run.rows)
        if (row.pareto)
          std::cout << "  " << describeRow(row) << '\n';
    }
    if (several || study.exact) {
      std::cout << "Pareto front of every run" << (study.exact ? " and the exact search" : "")
                << ":\n";
      for (std::size_t r = 0; r < study.runs.size(); ++r)
        for (std::size_t i = 0; i < study.runs[r].rows.size(); ++i)
          if (overall[r][i])
            std::cout << "  " << std::left << std::setw(28) << study.runs[r].label() << ' '
                      << describeRow(study.runs[r].rows[i]) << '\n';
      if (study.exact && overall.back().front())
        std::cout << "  " << std::left << std::setw(28) << "exact search" << ' '
                  << describeRow(*study.exact) << '\n';
    }
    if (!args.out.empty())
      std::cout << "wrote " << args.out << '\n';
  }
  return kExitOk;
}

} // namespace

void addSweepCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Build an ANN index (or several: a trade-off study over the same queries) and "
               "sweep its search parameters: recall@k, QPS, latency, the recall/QPS Pareto "
               "front, and the exact search on the same queries as the reference");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--index", args->kind, "graph or ivf")->capture_default_str();
  cmd->add_option("--k", args->k, "Neighbours per query")->capture_default_str();
  cmd->add_option("--metric", args->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--queries", args->queries,
                  "Query vectors; without, --holdout rows of the data (seeded) serve as queries "
                  "and are left out of the index");
  cmd->add_option("--holdout", args->holdout,
                  "Rows held out as queries when no --queries, at most half the data (default: " +
                      std::to_string(kDefaultHoldout) + ", or half the data when that is fewer)")
      ->check(atLeast(1));
  cmd->add_option("--truth", args->truth,
                  "Ground-truth ids (.npy, queries × ≥k); without, our "
                  "exact search computes them");
  cmd->add_option("--out", args->out,
                  "Write every run's rows and the exact reference here as CSV (columns run, "
                  "index, k, build.NAME…, the search parameters, recall, qps, p50_ms, p99_ms, "
                  "build_s, bytes, pareto, pareto_all)");
  cmd->add_option("--build", args->build,
                  "A build parameter, NAME=VALUE (graph: degree, build_k; ivf: nlist, "
                  "iterations, kmeans_pp); repeatable; NAME=V1,V2,… builds one index per value "
                  "(several: their product), all swept over the same queries");
  cmd->add_option("--run", args->runs,
                  "An index of a study, KIND[:NAME=VALUE,…] (e.g. graph:degree=48 or "
                  "ivf:nlist=1000); repeatable, instead of --index and --build; each --grid "
                  "applies to the kinds that have its parameter");
  cmd->add_flag("--no-exact", args->noExact,
                "Do not time the exact search on the queries (the reference row)");
  cmd->add_option(
      "--grid", args->grid,
      "Search values to sweep, NAME=V1,V2,… (graph: ef, degree, entries, upper_ef, "
      "quantized; ivf: nprobe); repeatable for a product; default: the index's accuracy knob");
  cmd->add_option("--batch", args->batch, "Queries per search call for QPS (0: all at once)")
      ->check(atLeast(0))
      ->capture_default_str();
  cmd->add_option("--timing-runs", args->timingRuns,
                  "Timed passes per setting after a warm-up; QPS is the best (ann-benchmarks)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--min-timed-s", args->minTimedSeconds,
                  "Timed passes repeat until this much searching was timed (at most 1,000 "
                  "passes); QPS is the best pass")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  cmd->add_option("--latency-queries", args->latencyQueries,
                  "Queries timed one at a time for p50/p99")
      ->check(atLeast(0))
      ->capture_default_str();
  cmd->add_option("--missed-query", args->missedQuery,
                  "The query whose missed true neighbours each row lists (--json)")
      ->capture_default_str();
  cmd->add_option("--save-index", args->saveIndex, "Save the built index here");
  cmd->add_option("--load-index", args->loadIndex, "Load this index instead of building one");
  args->common.addTo(*cmd);
  cmd->callback([args, cmd, &exitCode] {
    args->kindGiven = cmd->count("--index") > 0;
    exitCode = runGuarded([&] { return runSweepCommand(*args); }, {args->path, args->queries});
  });
}

} // namespace nearscape::cli

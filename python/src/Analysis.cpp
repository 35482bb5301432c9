// The pipelines of nearscape-cli's other commands, on arrays: sweep, minimax_path, layout,
// duplicates, outliers, compare. Each returns what the command prints with --json (its field
// names), and arrays where the command writes files.
#include "Bindings.h"
#include "ResultJson.h"
#include "ToPython.h"

#include <cmath>

namespace nearscape::python {
namespace {

/// A graph given as (ids, distances), as knn_graph returns it.
struct GivenGraph {
  IdRows ids;
  FloatRows distances;
};

std::optional<GivenGraph> graphArgument(py::handle value) {
  if (!py::isinstance<py::tuple>(value) && !py::isinstance<py::list>(value))
    return std::nullopt;
  const py::sequence pair = py::reinterpret_borrow<py::sequence>(value);
  if (py::len(pair) != 2)
    throw InvalidArgument("a graph is a pair (ids, distances), as knn_graph returns it");
  GivenGraph g{idRows(pair[0], "ids"), floatRows(pair[1], "distances")};
  if (g.ids.view.rows != g.distances.view.rows || g.ids.view.cols != g.distances.view.cols)
    throw InvalidArgument("the graph's ids and distances differ in shape");
  return g;
}

/// The checks nearscape-cli's graph reader runs on a graph file (knnGraphProblem: ids in range,
/// no self-loops, finite non-negative distances…) on a graph given as arrays over `n` items.
void checkGivenGraph(const GivenGraph& g, std::int64_t n, Metric metric) {
  if (const std::string problem =
          knnGraphProblem(g.ids.view.data, g.distances.view.data, g.ids.view.size(), n, metric);
      !problem.empty())
    throw InvalidArgument(problem);
}

KnnResult knnResultOf(const GivenGraph& g) {
  KnnResult r;
  const auto& i = g.ids.view;
  const auto& d = g.distances.view;
  r.ids =
      Matrix<std::int32_t>(std::vector<std::int32_t>(i.data, i.data + i.size()), i.rows, i.cols);
  r.distances = Matrix<float>(std::vector<float>(d.data, d.data + d.size()), d.rows, d.cols);
  r.report.setMethod(KnnMethod::Given);
  return r;
}

py::dict minimaxPathPy(py::handle xOrGraph, std::int64_t a, std::int64_t b, const PyInteger& kArg,
                       const std::string& metric, bool bridge, const std::string& backend,
                       int threads, std::uint64_t seed, const py::object& progress) {
  const int k = intOf(kArg, "k");
  const Context context = makeContext(backend, py::none(), threads, seed);
  const Metric m = metricOf(metric);
  const std::optional<GivenGraph> given = graphArgument(xOrGraph);
  std::optional<FloatRows> data;
  if (!given)
    data = floatRows(xOrGraph, "x");
  const std::int64_t n = given ? given->ids.view.rows : data->view.rows;
  for (auto [name, id] : {std::pair{"a", a}, std::pair{"b", b}})
    if (id < 0 || id >= n)
      throw InvalidArgument(std::string(name) + " " + std::to_string(id) + " is out of range [0, " +
                            std::to_string(n) + ")");
  if (given && bridge)
    throw InvalidArgument("bridge=True needs the vectors, not a graph: pass x");
  if (given)
    checkGivenGraph(*given, n, m);
  UndirectedGraph graph;
  std::shared_ptr<SpanningForest> forest;
  std::size_t bridges = 0;
  std::string graphNote;
  try {
    runJob(
        [&](JobControl& job) {
          if (given) {
            graph = symmetrizeKnnGraph(given->ids.view, given->distances.view, m);
            forest = std::make_shared<SpanningForest>(graph, context, job);
            graphNote = "given";
            return;
          }
          ExploreParams params; // as nearscape-cli path builds it
          params.metric = m;
          params.k = k;
          params.neighbours = false;
          params.map = false;
          params.bridge = bridge;
          Exploration e = explore(data->view, params, context, job);
          graph = std::move(e.undirected);
          forest = e.forest;
          bridges = e.bridges.size();
          graphNote = "k=" + std::to_string(k) + " (" + e.graph.report.describe() + ")";
        },
        progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x");
  }
  const GraphPath minimax = minimaxPath(*forest, std::int32_t(a), std::int32_t(b));
  const GraphPath shortest = shortestPath(graph, std::int32_t(a), std::int32_t(b));
  results::MinimaxPathFacts facts;
  facts.from = a;
  facts.to = b;
  facts.metric = m;
  facts.weights = graph.weightNote;
  facts.components = connectedComponents(graph).count;
  facts.bridgesAdded = bridges;
  facts.mstBackend = forest->builtOn();
  facts.graph = graphNote;
  return toPython(results::minimaxPathJson(minimax, shortest, facts)).cast<py::dict>();
}

py::array_t<float> layoutPy(py::handle x, int dim, const PyInteger& kArg, int epochs,
                            const std::string& metric, const py::object& graphArg,
                            const std::string& backend, int threads, std::uint64_t seed,
                            const py::object& progress) {
  const int k = intOf(kArg, "k");
  const FloatRows data = floatRows(x, "x");
  if (dim != 2 && dim != 3)
    throw InvalidArgument("dim must be 2 or 3");
  const Context context = makeContext(backend, py::none(), threads, seed);
  std::optional<GivenGraph> given;
  if (!graphArg.is_none()) {
    given = graphArgument(graphArg);
    if (!given)
      throw InvalidArgument("graph must be a pair (ids, distances), as knn_graph returns it");
  }
  ExploreParams params; // as nearscape-cli layout runs it
  params.metric = metricOf(metric);
  params.k = k;
  params.neighbours = false;
  params.forest = false;
  params.layout.dim = dim;
  params.layout.epochs = epochs;
  ExploreStages stages;
  std::optional<KnnResult> supplied;
  if (given) {
    if (given->ids.view.rows != data.view.rows)
      throw InvalidArgument("graph: the graph has " + std::to_string(given->ids.view.rows) +
                            " rows but x has " + std::to_string(data.view.rows));
    checkGivenGraph(*given, data.view.rows, params.metric);
    supplied = knnResultOf(*given);
    stages.graph = [&](const Exploration&) { return supplied; };
  }
  Matrix<float> map;
  try {
    runJob([&](JobControl& job) { map = explore(data.view, params, context, job, stages).map; },
           progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x");
  }
  return toArray(std::move(map));
}

py::dict outliersPy(py::handle x, const PyInteger& kArg, const std::string& score, std::int64_t top,
                    const std::string& metric, const std::string& backend,
                    const py::object& memoryBudget, int threads, const py::object& progress) {
  const int k = intOf(kArg, "k");
  const FloatRows data = floatRows(x, "x");
  const std::string scoreName = lowered(score);
  NEARSCAPE_EXPECTS(scoreName == "kth" || scoreName == "lof",
                    "score must be kth or lof (any case), not '" + score + "'");
  NEARSCAPE_EXPECTS(top >= 0, "top must not be negative");
  expectGraphK(k, data.view.rows);
  const Context context = makeContext(backend, memoryBudget, threads, 0);
  const Metric m = metricOf(metric);
  KnnResult graph;
  std::vector<float> scores;
  try { // the exact graph: an approximate one would flag items whose neighbours were missed
    // One job for both stages, so that progress stays one monotone run ending at 1.0.
    runJob(
        [&](JobControl& job) {
          graph = knnGraph(data.view, k, m, context, job);
          if (scoreName == "lof") // k-distinct: repeated rows count once (DistinctOutliers.h)
            scores = distinctLocalOutlierFactor(data.view, k, m, context, job, &graph).scores;
          else
            scores = kthNeighbourDistance(graph.distances.view(), k);
        },
        progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x");
  }
  py::dict j = toPython(results::outliersJson(data.view.rows, k, scoreName, m, graph.report, scores,
                                              topItems(scores, top)))
                   .cast<py::dict>();
  j["scores"] = toArray(std::move(scores));
  return j;
}

py::dict comparePy(py::handle aArg, py::handle bArg, const PyInteger& kArg,
                   const std::string& metricA, const std::string& metricB, std::int64_t top,
                   const std::string& backend, const py::object& memoryBudget, int threads,
                   const py::object& progress) {
  const int k = intOf(kArg, "k");
  const FloatRows a = floatRows(aArg, "a"), b = floatRows(bArg, "b");
  if (a.view.rows != b.view.rows)
    throw InvalidArgument("a has " + std::to_string(a.view.rows) + " items and b has " +
                          std::to_string(b.view.rows) +
                          ": two embeddings of the same items have as many rows");
  NEARSCAPE_EXPECTS(top >= 0, "top must not be negative");
  expectGraphK(k, a.view.rows);
  const Context context = makeContext(backend, memoryBudget, threads, 0);
  const Metric ma = metricOf(metricA), mb = metricOf(metricB);
  std::vector<float> overlap;
  try {
    runJob(
        [&](JobControl& job) {
          JobControl first = job.sub(0, 0.5), second = job.sub(0.5, 1);
          const KnnResult ga = knnGraph(a.view, k, ma, context, first);
          const KnnResult gb = knnGraph(b.view, k, mb, context, second);
          overlap = neighbourhoodOverlap(ga.ids.view(), gb.ids.view(), k);
        },
        progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "a");
  }
  const results::OverlapSummary summary = results::summariseOverlap(overlap, k, top);
  py::dict j =
      toPython(results::compareJson(a.view.rows, k, ma, mb, overlap, summary)).cast<py::dict>();
  j["overlap"] = toArray(std::move(overlap));
  return j;
}

py::dict duplicatesPy(py::handle x, const std::optional<double>& threshold,
                      const std::optional<double>& quantileOf, const std::string& metric,
                      std::int64_t tileRows, int boxDims, std::int64_t maxPairs,
                      const std::string& backend, const py::object& memoryBudget, int threads,
                      const py::object& progress) {
  const FloatRows data = floatRows(x, "x");
  NEARSCAPE_EXPECTS(threshold.has_value() != quantileOf.has_value(),
                    "give either threshold or quantile");
  NEARSCAPE_EXPECTS(!quantileOf || (*quantileOf >= 0 && *quantileOf <= 1),
                    "quantile must lie in [0, 1]");
  NEARSCAPE_EXPECTS(tileRows >= 1 && boxDims >= 1, "tile_rows and box_dims must be at least 1");
  const Context context = makeContext(backend, memoryBudget, threads, 0);
  const Metric m = metricOf(metric);
  DuplicateParams params;
  params.tileRows = tileRows;
  params.boxDims = boxDims;
  params.maxPairs = maxPairs;
  NearPairs pairs;
  double reach = 0;
  try {
    runJob(
        [&](JobControl& job) {
          if (quantileOf) {
            QuantilePairs found =
                pairsWithinQuantile(data.view, *quantileOf, m, context, job, params);
            reach = found.reach;
            pairs = std::move(found.pairs);
            std::erase_if(pairs.pairs,
                          [&](const NearPair& p) { return p.distance > pairs.threshold; });
          } else {
            pairs = pairsWithin(data.view, *threshold, m, context, job, params);
          }
        },
        progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x");
  }
  const DuplicateGroups groups = groupPairs(data.view.rows, pairs.pairs, pairs.threshold);
  py::dict j =
      toPython(results::duplicatesJson(data.view.rows, m, pairs, groups, quantileOf, reach))
          .cast<py::dict>();
  j["group_list"] = groups.groups;
  j["group_of"] = toArray(std::vector<std::int32_t>(groups.groupOf));
  std::vector<std::int32_t> ends;
  std::vector<double> distances;
  for (const NearPair& p : pairs.pairs) {
    ends.push_back(p.a);
    ends.push_back(p.b);
    distances.push_back(p.distance);
  }
  const std::int64_t count = std::int64_t(pairs.pairs.size());
  j["pair_ids"] = toArray(Matrix<std::int32_t>(std::move(ends), count, 2));
  j["pair_distances"] = toArray(std::move(distances));
  addFields(j, results::duplicatesWorkJson(pairs));
  j["seconds"] = pairs.seconds;
  return j;
}

/// `arg` as a dict of names, for the messages of grid and build. Throws InvalidArgument.
py::dict namesDict(const py::object& arg, const char* what) {
  if (!py::isinstance<py::dict>(arg))
    throw InvalidArgument(std::string(what) + " must be a dict of values by name, not " +
                          std::string(py::repr(arg)));
  for (const auto& item : arg.cast<py::dict>())
    if (!py::isinstance<py::str>(item.first))
      throw InvalidArgument(std::string(what) + ": the names must be strings, not " +
                            std::string(py::repr(item.first)));
  return arg.cast<py::dict>();
}

/// {"ef": [16, 64]} → every combination, as the CLI's repeated --grid NAME=V1,V2. Throws
/// InvalidArgument (a value that is not a number, as the CLI's "ef=lots").
std::vector<ParameterValues> gridOf(const py::object& grid, std::string_view kind) {
  if (grid.is_none())
    return {};
  std::vector<ParameterValues> settings = {{}};
  for (const auto& [nameArg, values] : namesDict(grid, "grid")) {
    const std::string name = nameArg.cast<std::string>();
    std::vector<double> list;
    if (py::isinstance<py::str>(values) || !py::hasattr(values, "__iter__"))
      list.push_back(numberArg(values, "grid " + name));
    else
      for (py::handle v : values)
        list.push_back(numberArg(v, "grid " + name));
    NEARSCAPE_EXPECTS(!list.empty(), "grid " + name + ": no values");
    std::vector<ParameterValues> next;
    for (const ParameterValues& s : settings)
      for (double v : list) {
        ParameterValues p = s;
        p[name] = v;
        next.push_back(p);
      }
    settings = next;
    NEARSCAPE_EXPECTS(settings.size() <= 10000,
                      "grid asks for more than 10000 search settings; sweep fewer values");
  }
  for (const ParameterValues& s : settings)
    (void)parseIndexSearchParams(kind, s); // an unknown name fails before any work
  return settings;
}

/// An integer-valued parameter as an int (every index parameter but none so far is one).
py::object numberOf(double value) {
  if (std::floor(value) == value && std::abs(value) < 9e15)
    return py::int_(static_cast<long long>(value));
  return py::float_(value);
}

py::dict rowDict(const SweepRow& r, const std::string& index, const std::string& build) {
  py::dict row;
  row["index"] = index;
  row["build"] = build;
  for (const auto& [name, value] : r.params)
    row[py::str(name)] = numberOf(value);
  row["recall"] = r.recall;
  row["qps"] = r.qps;
  row["p50_ms"] = r.p50Ms;
  row["p99_ms"] = r.p99Ms;
  row["build_s"] = r.buildSeconds;
  row["bytes"] = r.bytes;
  row["pareto"] = r.pareto;
  row["passes"] = r.passes;
  row["timed_s"] = r.timedSeconds;
  row["where"] = r.where;
  return row;
}

py::list sweepPy(py::handle x, const std::string& indexName, const PyInteger& kArg,
                 const py::object& queriesArg, const py::object& holdout, const py::object& build,
                 const py::object& grid, const std::string& metric, std::int64_t batch,
                 int timingRuns, std::int64_t latencyQueries, bool exact, double minTimedSeconds,
                 const std::string& backend, const py::object& memoryBudget, int threads,
                 std::uint64_t seed, const py::object& progress) {
  const std::string index = lowered(indexName);
  const int k = intOf(kArg, "k");
  const FloatRows data = floatRows(x, "x");
  std::optional<FloatRows> queryRows;
  if (!queriesArg.is_none())
    queryRows = floatRows(queriesArg, "queries");
  const Context context = makeContext(backend, memoryBudget, threads, seed);
  NEARSCAPE_EXPECTS(timingRuns >= 1 && timingRuns <= 100, "timing_runs must lie in [1, 100]");
  NEARSCAPE_EXPECTS(std::isfinite(minTimedSeconds) && minTimedSeconds >= 0 && minTimedSeconds <= 60,
                    "min_timed_s must lie in [0, 60] seconds");
  ParameterValues buildValues;
  if (!build.is_none())
    for (const auto& [name, value] : namesDict(build, "build"))
      buildValues[name.cast<std::string>()] = numberArg(value, "build " + name.cast<std::string>());
  HeldOutSweepOptions options; // as nearscape-cli sweep runs one index
  options.build = parseIndexBuildParams(index, buildValues);
  options.metric = metricOf(metric);
  // None: the engine's default (1000 rows, or half the data when that is fewer).
  options.holdout = holdout.is_none() ? 0 : *intOf(holdout, "holdout");
  NEARSCAPE_EXPECTS(holdout.is_none() || options.holdout >= 1,
                    "holdout must be at least 1 row (None: " + std::to_string(kDefaultHoldout) +
                        ", or half the data when that is fewer)");
  options.sweep.k = k;
  options.sweep.grid = gridOf(grid, index);
  std::string note; // ef below k: said as the CLI says it, measured once
  (void)effectiveSweepGrid(options.sweep.grid, k, &note);
  if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0)
    throw py::error_already_set(); // warnings made errors
  options.sweep.batchSize = batch;
  options.sweep.timingRuns = timingRuns;
  options.sweep.minTimedSeconds = minTimedSeconds;
  options.sweep.latencyQueries = latencyQueries;
  options.exactReference = exact;
  HeldOutSweep result;
  try {
    runJob(
        [&](JobControl& job) {
          result =
              heldOutSweep(data.view, queryRows ? std::optional(queryRows->view) : std::nullopt,
                           options, context, job);
        },
        progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x", "queries");
  }
  const std::string label = formatParameters(result.index->buildValues());
  py::list rows;
  for (const SweepRow& r : result.rows)
    rows.append(rowDict(r, index, label));
  if (result.exact) {
    SweepRow reference = *result.exact;
    // The reference joins the front only where no setting beats it on both counts.
    std::vector<SweepRow> all = result.rows;
    all.push_back(reference);
    reference.pareto = paretoFront(all).back();
    rows.append(rowDict(reference, "exact", ""));
  }
  return rows;
}

} // namespace

py::dict parameterDict(const ParameterValues& values) {
  py::dict out;
  for (const auto& [name, value] : values)
    out[py::str(name)] = numberOf(value);
  return out;
}

void bindAnalysis(py::module_& m) {
  m.def("minimax_path", &minimaxPathPy,
        "Returns a dict: the min-max (smoothest) path from item a to item b through the kNN graph: "
        "the path whose "
        "largest step is smallest, found on the minimum spanning forest. x_or_graph: the vectors "
        "(the graph of k neighbours is built as nearscape-cli path builds it) or a graph "
        "(ids, distances) from knn_graph. bridge: join disconnected components first (needs x). "
        "The dict has nearscape-cli path --json's fields: found, path, steps, bottleneck, "
        "bottleneck_step, total, from, to, metric, weights, components, bridges_added, "
        "mst_backend, shortest (the least-total path, for comparison), graph.",
        py::arg("x_or_graph"), py::arg("a"), py::arg("b"), py::arg("k") = 10,
        py::arg("metric") = "l2", py::arg("bridge") = false, py::kw_only(),
        py::arg("backend") = "auto", py::arg("threads") = 0, py::arg("seed") = 0,
        py::arg("progress") = py::none());
  m.def("layout", &layoutPy,
        "Returns the map of x (float32 n × dim, dim 2 or 3): PCA, then the kNN-graph layout, as "
        "nearscape-cli layout --out writes it (the same seed gives the same map, whatever the "
        "thread count). graph: a (ids, distances) pair to lay out instead of building one; "
        "epochs 0: 500 up to 10,000 items, 200 beyond.",
        py::arg("x"), py::arg("dim") = 2, py::arg("k") = 15, py::arg("epochs") = 0,
        py::arg("metric") = "l2", py::arg("graph") = py::none(), py::kw_only(),
        py::arg("backend") = "auto", py::arg("threads") = 0, py::arg("seed") = 0,
        py::arg("progress") = py::none());
  m.def("outliers", &outliersPy,
        "Returns a dict of outlier scores from the exact kNN graph: 'lof' (local outlier factor: "
        "~1 inside a "
        "cluster, above 1 when less dense than the neighbours) or 'kth' (distance to the k-th "
        "neighbour). The dict has nearscape-cli outliers --json's fields (rows, k, score, metric, "
        "graph, top: [{id, score}]) and scores, every item's (float32 n).",
        py::arg("x"), py::arg("k") = 10, py::arg("score") = "lof", py::arg("top") = 20,
        py::arg("metric") = "l2", py::kw_only(), py::arg("backend") = "auto",
        py::arg("memory_budget") = py::none(), py::arg("threads") = 0,
        py::arg("progress") = py::none());
  m.def("compare", &comparePy,
        "Returns a dict comparing two embeddings of the same items (row for row): per item, the "
        "share of its exact k-NN "
        "in a that are also its exact k-NN in b. The dict has nearscape-cli compare --json's "
        "fields (rows, k, metric_a, metric_b, mean_overlap, histogram, most_changed: "
        "[{id, overlap}]) and overlap, every item's (float32 n).",
        py::arg("a"), py::arg("b"), py::arg("k") = 10, py::arg("metric_a") = "l2",
        py::arg("metric_b") = "l2", py::arg("top") = 20, py::kw_only(), py::arg("backend") = "auto",
        py::arg("memory_budget") = py::none(), py::arg("threads") = 0,
        py::arg("progress") = py::none());
  m.def("duplicates", &duplicatesPy,
        "Returns a dict of near-duplicates: every pair within `threshold` (or within the "
        "`quantile` of every "
        "item's exact nearest-other distance), found by an exact range search, joined into "
        "groups. The dict has nearscape-cli duplicates --json's fields (rows, metric, threshold, "
        "quantile, searched_up_to, pairs, groups, items_in_groups, redundant_items, "
        "largest_group, tile_pairs_computed, tile_pairs, candidates, run, seconds) and the "
        "results themselves: pair_ids (int32 pairs × 2, a < b), pair_distances (float64), "
        "group_list (largest first) and group_of (int32 n, −1 in none).",
        py::arg("x"), py::arg("threshold") = py::none(), py::arg("quantile") = py::none(),
        py::arg("metric") = "l2", py::kw_only(), py::arg("tile_rows") = 512,
        py::arg("box_dims") = 16, py::arg("max_pairs") = 0, py::arg("backend") = "auto",
        py::arg("memory_budget") = py::none(), py::arg("threads") = 0,
        py::arg("progress") = py::none());
  m.def("_sweep", &sweepPy, "The rows of sweep() as dicts (see nearscape.sweep).", py::arg("x"),
        py::arg("index") = "graph", py::arg("k") = 10, py::arg("queries") = py::none(),
        py::arg("holdout") = py::none(), py::arg("build") = py::none(),
        py::arg("grid") = py::none(), py::arg("metric") = "l2", py::arg("batch") = 0,
        py::arg("timing_runs") = 3, py::arg("latency_queries") = 200, py::arg("exact") = true,
        py::kw_only(), py::arg("min_timed_s") = 0.2, py::arg("backend") = "auto",
        py::arg("memory_budget") = py::none(), py::arg("threads") = 0, py::arg("seed") = 0,
        py::arg("progress") = py::none());
}

} // namespace nearscape::python

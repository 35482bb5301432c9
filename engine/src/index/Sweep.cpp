#include "nearscape/index/Sweep.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace nearscape {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, std::size_t(std::ceil(p * double(v.size())) - 1));
  return v[i];
}

/// True neighbours of row `row` (the first k of `truth`) that `found` does not hold.
std::vector<std::int32_t> missedNeighbours(const MatrixView<std::int32_t>& found,
                                           const MatrixView<std::int32_t>& truth, std::int64_t row,
                                           int k) {
  std::vector<std::int32_t> missed;
  const std::int32_t* f = found.row(row);
  for (int j = 0; j < k; ++j)
    if (std::find(f, f + found.cols, truth.row(row)[j]) == f + found.cols)
      missed.push_back(truth.row(row)[j]);
  return missed;
}

} // namespace

TimedPasses timeBestPass(const std::function<void()>& pass, int minPasses, double minSeconds,
                         int maxPasses) {
  TimedPasses timed;
  timed.best = std::numeric_limits<double>::infinity();
  const int most = std::max({1, minPasses, maxPasses});
  while (timed.passes < most &&
         (timed.passes < std::max(1, minPasses) || timed.total < minSeconds)) {
    const auto t = std::chrono::steady_clock::now();
    pass();
    const double seconds = secondsSince(t);
    timed.best = std::min(timed.best, seconds);
    timed.total += seconds;
    ++timed.passes;
  }
  return timed;
}

std::vector<ParameterValues> defaultSweepGrid(const AnnIndex& index, int k) {
  std::vector<ParameterValues> grid;
  for (const IndexParameter& p : index.searchParameters()) {
    if (p.name == "ef") {
      for (double ef : {10., 16., 24., 32., 48., 64., 96., 128., 192., 256., 384., 512.})
        if (ef >= k && ef <= p.maximum)
          grid.push_back({{"ef", ef}});
      if (grid.empty() || grid.front().at("ef") != k)
        grid.insert(grid.begin(), {{"ef", double(k)}});
    } else if (p.name == "nprobe") {
      for (double probe = 1; probe < p.maximum; probe *= 2)
        grid.push_back({{"nprobe", probe}});
      grid.push_back({{"nprobe", p.maximum}});
    }
  }
  return grid;
}

std::vector<ParameterValues> effectiveSweepGrid(const std::vector<ParameterValues>& grid, int k,
                                                std::string* note) {
  std::vector<ParameterValues> settings;
  std::set<double> raised;
  for (ParameterValues setting : grid) {
    if (const auto ef = setting.find("ef"); ef != setting.end() && ef->second < k) {
      raised.insert(ef->second);
      ef->second = k;
    }
    if (std::find(settings.begin(), settings.end(), setting) == settings.end())
      settings.push_back(setting);
  }
  if (note) {
    note->clear();
    if (!raised.empty()) {
      std::ostringstream text;
      text << "ef = ";
      std::size_t i = 0;
      for (double v : raised)
        text << (i++ == 0 ? "" : i == raised.size() ? " and " : ", ") << v;
      const bool one = raised.size() == 1;
      text << (one ? " is" : " are") << " below k = " << k
           << (one ? " and searches" : " and search") << " as ef = " << k
           << " (the graph search needs ef ≥ k): measured once, as ef = " << k;
      *note = text.str();
    }
  }
  return settings;
}

namespace {

/// Checks what runSweep and measureExactSearch share: queries, truth, the query whose misses
/// are listed. Throws InvalidArgument.
void checkSweepInputs(const MatrixView<float>& queries, const MatrixView<std::int32_t>& truth,
                      const SweepOptions& options) {
  const int k = options.k;
  NEARSCAPE_EXPECTS(queries.rows > 0, "a sweep needs queries");
  NEARSCAPE_EXPECTS(truth.rows == queries.rows && truth.cols >= k,
                    "ground truth is " + std::to_string(truth.rows) + " × " +
                        std::to_string(truth.cols) + ", expected " + std::to_string(queries.rows) +
                        " × ≥" + std::to_string(k));
  NEARSCAPE_EXPECTS(options.missedQuery >= 0 && options.missedQuery < queries.rows,
                    "the query whose misses are listed is out of range");
}

/// Where a search ran, as a sweep row says it: "cuda, exact", "cpu, index search"…
std::string whereItRan(const KnnResult& r) {
  const std::string_view method = knnMethodName(r.report.method());
  return std::string(backendName(r.backend)) + (method.empty() ? "" : ", " + std::string(method));
}

/// Measures one setting: `search` (k nearest of some queries) timed as the sweep counts it —
/// a warm-up, the best of the timed passes, batch-1 latencies — and judged against `truth`.
/// Fills the row's recall, QPS, passes, where it ran, latencies and misses; returns the backend
/// of the timed passes.
Backend
measureSetting(const std::function<KnnResult(const MatrixView<float>&, JobControl&)>& search,
               const MatrixView<float>& queries, const MatrixView<float>& base,
               const MatrixView<std::int32_t>& truth, Metric metric, const SweepOptions& options,
               SweepRow& row, JobControl& job) {
  const int k = options.k;
  const std::int64_t batch = options.batchSize > 0 ? options.batchSize : queries.rows;
  // A warm-up call so that first-touch costs (device buffers, kernels loaded on first use,
  // library heuristics for a batch's shape, pages) are not timed: up to 1,024 queries, enough
  // to take the paths a whole batch takes.
  search({queries.data, std::min<std::int64_t>({queries.rows, batch, 1024}), queries.cols}, job);
  std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
  Backend ranOn = Backend::Cpu;
  const TimedPasses timed = timeBestPass(
      [&] {
        for (std::int64_t b0 = 0; b0 < queries.rows; b0 += batch) {
          const std::int64_t n = std::min(batch, queries.rows - b0);
          const KnnResult r = search({queries.row(b0), n, queries.cols}, job);
          std::copy(r.ids.data(), r.ids.data() + n * k, ids.begin() + b0 * k);
          row.where = whereItRan(r);
          ranOn = r.backend;
        }
      },
      options.timingRuns, options.minTimedSeconds, options.maxTimingRuns);
  row.qps = double(queries.rows) / std::max(timed.best, 1e-9);
  row.passes = timed.passes;
  row.timedSeconds = timed.total;
  const MatrixView<std::int32_t> found{ids.data(), queries.rows, k};
  row.recall = recallAtK(found, truth, k, queries, base, metric);
  row.missed = missedNeighbours(found, truth, options.missedQuery, k);
  std::vector<double> latencies;
  for (std::int64_t i = 0; i < std::min(options.latencyQueries, queries.rows); ++i) {
    const auto t1 = std::chrono::steady_clock::now();
    search({queries.row(i), 1, queries.cols}, job);
    latencies.push_back(secondsSince(t1) * 1e3);
  }
  row.p50Ms = percentile(latencies, 0.5);
  row.p99Ms = percentile(latencies, 0.99);
  return ranOn;
}

} // namespace

std::vector<SweepRow> runSweep(const AnnIndex& index, const MatrixView<float>& queries,
                               const MatrixView<float>& base, const MatrixView<std::int32_t>& truth,
                               const SweepOptions& options,
                               const std::function<void(const SweepRow&)>& onRow, JobControl& job) {
  checkSweepInputs(queries, truth, options);
  const int k = options.k;
  const std::vector<ParameterValues> grid =
      options.grid.empty() ? defaultSweepGrid(index, k) : effectiveSweepGrid(options.grid, k);
  std::vector<SweepRow> rows;
  for (std::size_t g = 0; g < grid.size(); ++g) {
    job.check();
    const double done = double(g) / double(grid.size());
    job.progress(done, "sweep: " + formatParameters(grid[g]));
    // The setting's many searches stop with the sweep but do not move its bar: each would
    // report its own 0 → 1 (the bar jumped to the end during the first setting).
    JobControl searches = job.sub(done, done);
    SweepRow row;
    row.params = grid[g];
    const IndexSearchParams setting = parseIndexSearchParams(index.kind(), grid[g]);
    row.buildSeconds = index.buildSeconds();
    row.bytes = index.bytes();
    measureSetting(
        [&](const MatrixView<float>& q, JobControl& j) { return index.search(q, k, setting, j); },
        queries, base, truth, index.metric(), options, row, searches);
    rows.push_back(row);
    if (onRow)
      onRow(row);
  }
  const std::vector<bool> front = paretoFront(rows);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i].pareto = front[i];
  job.progress(1.0, "sweep done");
  return rows;
}

SweepRow measureExactSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                            const MatrixView<std::int32_t>& truth, Metric metric,
                            const SweepOptions& options, const Context& context, JobControl& job,
                            Backend* where) {
  checkSweepInputs(queries, truth, options);
  job.progress(0.0, "timing the exact search");
  JobControl searches = job.sub(0.0, 0.0); // stops with the job; each search's 0 → 1 unseen
  SweepRow row;
  const auto t = std::chrono::steady_clock::now();
  const ExactKnnIndex exact(base, metric, context);
  row.buildSeconds = secondsSince(t);
  const Backend ranOn = measureSetting(
      [&](const MatrixView<float>& q, JobControl& j) { return exact.search(q, options.k, j); },
      queries, base, truth, metric, options, row, searches);
  row.pareto = true;
  if (where)
    *where = ranOn;
  job.progress(1.0, "exact search timed");
  return row;
}

std::vector<bool> paretoFront(const std::vector<SweepRow>& rows) {
  std::vector<bool> front(rows.size(), true);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows.size() && front[i]; ++j) {
      const SweepRow &a = rows[i], &b = rows[j];
      if (j != i && b.recall >= a.recall && b.qps >= a.qps &&
          (b.recall > a.recall || b.qps > a.qps))
        front[i] = false;
    }
  return front;
}

std::string sweepCsv(const std::vector<SweepRow>& rows) {
  std::set<std::string> names;
  for (const SweepRow& r : rows)
    for (const auto& [name, value] : r.params)
      names.insert(name);
  std::ostringstream out;
  out.precision(10);
  for (const std::string& name : names)
    out << name << ',';
  out << "recall,qps,p50_ms,p99_ms,build_s,bytes,pareto\n";
  for (const SweepRow& r : rows) {
    for (const std::string& name : names) {
      const auto it = r.params.find(name);
      if (it != r.params.end())
        out << it->second;
      out << ',';
    }
    out << r.recall << ',' << r.qps << ',' << r.p50Ms << ',' << r.p99Ms << ',' << r.buildSeconds
        << ',' << r.bytes << ',' << (r.pareto ? 1 : 0) << '\n';
  }
  return out.str();
}

} // namespace nearscape

#pragma once
/// @file Sweep.h
/// Parameter sweeps of an ANN index on the person's own data: for each setting, recall@k against
/// exact ground truth, throughput at a batch size, batch-1 latency, build time and bytes; and the
/// recall/throughput Pareto front.

#include "nearscape/index/AnnIndex.h"

#include <functional>
#include <optional>
#include <string>

namespace nearscape {

struct SweepOptions {
  int k = 10;
  /// The settings to measure, in order, by name (parseIndexSearchParams); empty =
  /// defaultSweepGrid(index, k).
  std::vector<ParameterValues> grid;
  std::int64_t batchSize = 0; ///< queries per search call for QPS; 0 = all at once
  /// Timed passes over the queries per setting, at least; QPS is the best of them (as
  /// ann-benchmarks counts it: the others paid for something else — a cold cache, another
  /// process).
  int timingRuns = 3;
  /// Passes repeat until at least this much searching has been timed (a GPU pass of 10,000
  /// queries lasts a few milliseconds: one pass is as much jitter as signal), up to
  /// maxTimingRuns passes.
  double minTimedSeconds = 0.2;
  int maxTimingRuns = 1000;
  std::int64_t latencyQueries = 200; ///< first queries timed one by one for p50/p99 (0 = none)
  std::int64_t missedQuery = 0;      ///< the query row whose missed true neighbours each row lists
};

struct SweepRow {
  ParameterValues params;
  double recall = 0;           ///< recall@k (docs/design.md, Conventions)
  double qps = 0;              ///< queries per second at options.batchSize
  double p50Ms = 0, p99Ms = 0; ///< batch-1 latency
  double buildSeconds = 0;
  std::uint64_t bytes = 0;
  bool pareto = false;              ///< on the recall/QPS front (set once the sweep ends)
  std::vector<std::int32_t> missed; ///< true neighbours of options.missedQuery this setting missed
  int passes = 0;                   ///< timed passes over the queries
  double timedSeconds = 0;          ///< their total time (the best of them gives qps)
  /// Where the timed passes searched: the backend's name, and for the exact search the method
  /// (e.g. "cuda, exact" or "cuda, STEP"); the last pass's.
  std::string where;
};

/// The timing of a setting's passes (timeBestPass).
struct TimedPasses {
  double best = 0;  ///< the fastest pass, seconds
  double total = 0; ///< all timed passes together, seconds
  int passes = 0;
};

/// Runs `pass` at least `minPasses` times and until `minSeconds` of passes have been timed, at
/// most `maxPasses` times (≥ 1 pass always); the best pass is the setting's time.
TimedPasses timeBestPass(const std::function<void()>& pass, int minPasses, double minSeconds,
                         int maxPasses);

/// The settings a sweep of `index` walks by default: its accuracy parameter over a geometric
/// range (graph: ef from k to 512; ivf: nprobe 1, 2, 4 … nlist), others at their defaults.
std::vector<ParameterValues> defaultSweepGrid(const AnnIndex& index, int k);

/// The settings a sweep for k neighbours measures of `grid`: an ef below k is searched as ef = k
/// (the graph search needs ef ≥ k and raises it, as hnswlib and Faiss do), so such a setting is
/// measured as, and labelled with, ef = k, and settings made equal by that are measured once
/// (where the first of them stood). `note` (optional) gets a line saying which values were
/// raised, or is left empty when none was.
std::vector<ParameterValues> effectiveSweepGrid(const std::vector<ParameterValues>& grid, int k,
                                                std::string* note = nullptr);

/// Measures each setting of effectiveSweepGrid(options.grid, options.k) and calls `onRow` as
/// soon as it is measured (the GUI plots rows live);
/// marks the Pareto front at the end. `truth` is queries × ≥k exact ids. Throws InvalidArgument
/// (a setting naming an unknown parameter or a value out of range, …), Cancelled (between and
/// inside settings).
std::vector<SweepRow> runSweep(const AnnIndex& index, const MatrixView<float>& queries,
                               const MatrixView<float>& base, const MatrixView<std::int32_t>& truth,
                               const SweepOptions& options,
                               const std::function<void(const SweepRow&)>& onRow = {},
                               JobControl& job = noJobControl());

/// The exact search as a sweep's reference point, measured as runSweep measures a setting (a
/// warm-up, QPS the best of the timed passes at options.batchSize, batch-1 p50/p99 over
/// options.latencyQueries) on the same queries: an ExactKnnIndex over `base` (the base kept
/// ready, as the GUI's clicks use it) built first, its build time the row's buildSeconds; a
/// batch takes the same path as knnSearch (on a GPU, its tiles), a single query the resident
/// base. Its recall@k is measured too (1, unless `truth` came from elsewhere and disagrees);
/// params are empty, bytes 0 (it holds no structure beyond the base), pareto true; the row's
/// `where` names the backend and method of the timed passes. `where` (optional) gets the
/// backend the timed passes searched on. Throws InvalidArgument (shapes, NaN/Inf), Cancelled.
SweepRow measureExactSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                            const MatrixView<std::int32_t>& truth, Metric metric,
                            const SweepOptions& options, const Context& context,
                            JobControl& job = noJobControl(), Backend* where = nullptr);

/// For each row, whether no other row has recall ≥ and QPS ≥ with one of them strictly greater.
std::vector<bool> paretoFront(const std::vector<SweepRow>& rows);

/// The rows as CSV: one column per parameter (the union, sorted by name), then recall, qps,
/// p50_ms, p99_ms, build_s, bytes, pareto.
std::string sweepCsv(const std::vector<SweepRow>& rows);

} // namespace nearscape

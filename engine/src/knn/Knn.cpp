#include "nearscape/knn/Knn.h"

#include "gpu/Dispatch.h"
#include "gpu/MultiDevice.h"
#include "knn/ExactCommon.h"
#include "knn/ExactCpu.h"
#include "knn/KnnDevice.h"
#include "knn/PairShares.h"
#include "knn/PairsExchange.h"
#include "knn/Step.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace nearscape {
namespace {

void validate(const MatrixView<float>& queries, const MatrixView<float>& base, int k, bool graph) {
  NEARSCAPE_EXPECTS(base.rows > 0 && base.cols > 0, "the data is empty");
  NEARSCAPE_EXPECTS(queries.rows > 0, "there are no queries");
  NEARSCAPE_EXPECTS(queries.cols == base.cols,
                    "queries have dimension " + std::to_string(queries.cols) +
                        " but the data has " + std::to_string(base.cols));
  NEARSCAPE_EXPECTS(base.rows <= std::numeric_limits<std::int32_t>::max(),
                    "more than 2^31 − 1 items: ids are int32");
  const std::int64_t maxK = graph ? base.rows - 1 : base.rows;
  // One row leaves a graph no k at all: say so rather than "must lie in [1, 0]".
  NEARSCAPE_EXPECTS(maxK >= 1, "k must be at least 1 and at most n − 1 = 0: the data has 1 row");
  NEARSCAPE_EXPECTS(k >= 1 && k <= maxK,
                    "k = " + std::to_string(k) + " is out of range: it must lie in [1, " +
                        std::to_string(maxK) + "]" +
                        (graph ? " (n − 1: an item is not its own neighbour)" : " (n)"));
  requireFinite(base, "the data");
  if (queries.data != base.data)
    requireFinite(queries, "the queries");
}

KnnResult run(const MatrixView<float>& queries, const MatrixView<float>& base, int k, Metric metric,
              bool graph, const Context& context, JobControl& job, const ExactKnnParams& params);

/// The whole call's time, probes that came to nothing included.
KnnResult dispatch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                   Metric metric, bool graph, const Context& context, JobControl& job,
                   const ExactKnnParams& params) {
  const auto started = std::chrono::steady_clock::now();
  KnnResult result = run(queries, base, k, metric, graph, context, job, params);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

/// Whether stepOnGpu tries STEP's clusters (a probe then decides): where they may pay
/// (gpuStepMayRun), on data large enough that the GEMM path is not already instant (or asked for).
bool stepTried(std::int64_t queries, const MatrixView<float>& base, int k, Metric metric,
               bool graph, const Context& context, const ExactKnnParams& params,
               std::int64_t allQueries = 0) {
  const bool tilesGiven = params.queryTile > 0 || params.baseTile > 0;
  const bool always = params.pruning == ExactKnnParams::Pruning::Always;
  // Clustering the base touches all of it many times; the GEMM path's work grows with the
  // queries. A few queries against a large base are the GEMM's (manifold 1M, 10k queries: the
  // clusters and their probe cost 0.9 s of a cold CLI search whose GEMM pass takes 0.07 s).
  const bool manyQueries = graph || std::max(allQueries, queries) * 4 >= base.rows;
  return knn::gpuStepMayRun(base, k, metric, context, always) && !tilesGiven &&
         params.pruning != ExactKnnParams::Pruning::Off &&
         (always || (base.rows >= 50000 && manyQueries));
}

/// STEP's clusters where they may pay, on the GPU: nothing where they do not (or were not tried).
/// `allQueries`: the rows of the whole search when these queries are one GPU's share of it.
std::optional<KnnResult> stepOnGpu(gpu::KnnDevice& gpu, const MatrixView<float>& queries,
                                   const MatrixView<float>& base, int k, Metric metric, bool graph,
                                   const Context& context, JobControl& job,
                                   const ExactKnnParams& params, std::int64_t allQueries = 0) {
  const bool always = params.pruning == ExactKnnParams::Pruning::Always;
  if (stepTried(queries.rows, base, k, metric, graph, context, params, allQueries)) {
    // Out of memory or beyond the clusters' limits (2^30 rows): the GEMM path tiles its work
    // and has its own limits.
    std::optional<KnnResult> step;
    gpu::tryOptionalGpuPath([&] {
      // (The fused tiles need sm_80 or later; the CUDA side also checks its shared memory.)
      const bool fusedTiles = params.fusedTiles && params.reducedPrecision &&
                              knn::gpuFusedTiles(base.cols, k) &&
                              queryDevice(context.device).computeCapability >= 80;
      step = gpu.stepSearch(queries, base, k, graph, context, job,
                            always       ? 2.0
                            : fusedTiles ? gpu::kStepMaxScoredShareFused
                                         : gpu::kStepMaxScoredShare);
    });
    return step;
  }
  return std::nullopt;
}

/// The GPU's exact search: STEP's clusters first where they may pay, else the GEMM path.
/// `allQueries`: the rows of the whole search when these queries are one GPU's share of it.
KnnResult exactOnGpu(gpu::KnnDevice& gpu, const MatrixView<float>& queries,
                     const MatrixView<float>& base, int k, Metric metric, bool graph,
                     const Context& context, JobControl& job, const ExactKnnParams& params,
                     std::int64_t allQueries = 0) {
  if (auto step = stepOnGpu(gpu, queries, base, k, metric, graph, context, job, params, allQueries))
    return std::move(*step);
  return gpu.exactSearch(queries, base, k, metric, graph, context, job, params);
}

/// Fewest query rows a GPU's share holds when a search is split over several (below, one GPU
/// does it all: a share's fixed cost — the base's upload, a GEMM's start — outweighs the split).
constexpr std::int64_t kMinRowsPerDevice = 4096;

/// Row `r` of `found` (k + 1 or k columns) into `outIds`/`outDists` (k) without `self`: a graph's
/// row searched as a query for k + 1. Under one (distance, id) order the k + 1 nearest rows minus
/// the row itself (or minus the last, where the row is not among them) are its k nearest others.
void dropSelf(const KnnResult& found, std::int64_t r, std::int32_t self, int k,
              std::int32_t* outIds, float* outDists) {
  int kept = 0;
  for (std::int64_t c = 0; c < found.ids.cols() && kept < k; ++c) {
    if (found.ids.row(r)[c] == self)
      continue;
    outIds[kept] = found.ids.row(r)[c];
    outDists[kept] = found.distances.row(r)[c];
    ++kept;
  }
}

/// The exact search split by query rows over several GPUs, each searching the whole base for its
/// share of the queries (Faiss's IndexReplicas splits queries the same way). A graph's rows ask
/// for k + 1 and drop themselves (dropSelf), so a share needs no notion of where its rows sit in
/// the base: the one-GPU result.
KnnResult exactOnDevices(gpu::KnnDevice& gpu, const std::vector<int>& devices,
                         const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool graph, const Context& context, JobControl& job,
                         const ExactKnnParams& params) {
  const std::size_t parts = devices.size();
  const int asked = graph ? k + 1 : k;
  std::vector<KnnResult> results(parts);
  gpu::onEachDevice(devices, context, job, [&](int p, const Context& one, JobControl& partJob) {
    const std::int64_t r0 = gpu::partBegin(queries.rows, parts, std::size_t(p));
    const std::int64_t r1 = gpu::partBegin(queries.rows, parts, std::size_t(p) + 1);
    results[std::size_t(p)] = exactOnGpu(gpu, {queries.row(r0), r1 - r0, queries.cols}, base, asked,
                                         metric, false, one, partJob, params, queries.rows);
  });
  std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
  std::vector<float> dists(ids.size());
  KnnResult merged;
  double candidates = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    const KnnResult& part = results[p];
    const std::int64_t r0 = gpu::partBegin(queries.rows, parts, p);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < part.ids.rows(); ++r)
      dropSelf(part, r, graph ? std::int32_t(r0 + r) : -1, k, ids.data() + (r0 + r) * k,
               dists.data() + (r0 + r) * k);
    merged.fallbackRows += part.fallbackRows;
    candidates += part.candidatesPerRow * double(part.ids.rows());
  }
  merged.ids = Matrix<std::int32_t>(std::move(ids), queries.rows, k);
  merged.distances = Matrix<float>(std::move(dists), queries.rows, k);
  merged.backend = Backend::Cuda;
  merged.report = results.front().report;
  merged.report.device = describeBackend(context);
  merged.report.detail += std::string(merged.report.detail.empty() ? "" : ", ") +
                          "queries split over " + std::to_string(parts) + " GPUs";
  merged.candidatesPerRow = candidates / double(queries.rows);
  return merged;
}

/// How the shares of a pairs split went: STEP's probe's verdict (the last of `finished`), then
/// when each share finished and how long it waited for the others at the exchange's rounds.
std::string sharesBalance(const std::vector<double>& finished, knn::PairsExchange& exchange) {
  auto ms = [](double seconds) { return std::to_string(std::lround(seconds * 1e3)); };
  const std::size_t parts = finished.size() - 1;
  std::string done, waited;
  for (std::size_t p = 0; p < parts; ++p) {
    if (p > 0) {
      done += '/';
      waited += '/';
    }
    done += ms(finished[p]);
    waited += ms(exchange.waitedSeconds(int(p)));
  }
  return (exchange.probeBeside() ? "STEP's probe gave way at " + ms(finished[parts]) + " ms; "
                                 : "") +
         "shares done at " + done + " ms, waited " + waited + " ms at their rounds";
}

/// A graph's exact kNN over several GPUs with each pair of rows scored once over all of them
/// (the rows' split scores every pair twice): STEP's clusters where they pay, on the first GPU,
/// probed beside the shares (which give up where it pays); else the paired float16 sweeps with
/// their bands split between the devices (gpu::KnnDevice::pairsShare), the shares merged on the
/// first GPU (or the host: knn/PairShares.h), and the rows a share could not bound searched again
/// on the first GPU — the one-GPU result, byte for byte. Nothing where neither applies (STEP then
/// tried, or not for these data).
std::optional<KnnResult> graphOnDevices(gpu::KnnDevice& gpu, const std::vector<int>& devices,
                                        const MatrixView<float>& data, int k, Metric metric,
                                        const Context& context, JobControl& job,
                                        const ExactKnnParams& params) {
  LogLaps lap(context, "exact kNN, pairs split:"); // at the log's debug level
  const Context first = gpu::onDevice(context, devices.front());
  const std::size_t parts = devices.size();
  // STEP's probe on the first GPU beside the shares, which wait for its verdict only before
  // handing in (PairsExchange's gate): where STEP pays, it builds the whole graph and the shares
  // give up at their next round.
  const bool probe = stepTried(data.rows, data, k, metric, true, first, params);
  knn::PairsExchange exchange{int(parts), probe}; // and the rows' thresholds, between the bands
  std::optional<KnnResult> step;
  std::vector<std::optional<gpu::PairsShare>> shares(parts);
  // When each part finished, from the start: the shares' balance, in the result's detail.
  const auto started = std::chrono::steady_clock::now();
  std::vector<double> finished(parts + 1, 0.0);
  auto sinceStart = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  gpu::runParts(parts + (probe ? 1 : 0), job, [&](int p, JobControl& partJob) {
    if (std::size_t(p) == parts) {
      try {
        step = stepOnGpu(gpu, data, data, k, metric, true, first, partJob, params);
      } catch (...) {
        exchange.open(false);
        throw;
      }
      exchange.open(!step);
      finished[parts] = sinceStart();
      if (!step) // its part of the bar is done: the shares' parts carry it on
        partJob.progress(1.0, "exact kNN (GPU)");
      return;
    }
    shares[std::size_t(p)] =
        gpu.pairsShare(data, k, metric, p, int(parts),
                       gpu::onDevice(context, devices[std::size_t(p)]), partJob, params, &exchange);
    finished[std::size_t(p)] = sinceStart();
  });
  lap("shares, and STEP's probe beside");
  if (step) {
    step->report.detail += std::string(step->report.detail.empty() ? "" : ", ") +
                           "STEP's clusters on one of " + std::to_string(devices.size()) + " GPUs";
    return step;
  }
  std::vector<gpu::PairsShare> found;
  for (auto& share : shares) {
    if (!share)
      return std::nullopt; // the paired sweeps do not apply: the rows' split does the work
    found.push_back(std::move(*share));
  }
  shares.clear();
  knn::MergedShares merged =
      found.front().mergedOnFirst
          ? knn::MergedShares{found.front().graphIds, found.front().graphDistances,
                              std::move(found.front().overflow), found.front().candidates}
          : knn::mergePairShares(found, effectiveThreads(context));
  KnnResult result;
  result.backend = Backend::Cuda;
  result.report = found.front().report;
  found.clear(); // the shares' lists: gigabytes at 10M rows
  lap("merge");
  job.check();
  const std::int64_t n = data.rows;
  if (!merged.overflow.empty()) {
    // Searched as queries for k + 1 and the row itself dropped, as exactOnDevices's shares do.
    std::vector<float> rows(merged.overflow.size() * std::size_t(data.cols));
    for (std::size_t i = 0; i < merged.overflow.size(); ++i)
      std::copy_n(data.row(merged.overflow[i]), data.cols, rows.data() + i * data.cols);
    ExactKnnParams again = params;
    again.pruning = ExactKnnParams::Pruning::Off; // STEP gave up on these data above
    JobControl redoJob = job.sub(0.95, 1.0);
    const KnnResult redo =
        gpu.exactSearch({rows.data(), std::int64_t(merged.overflow.size()), data.cols}, data, k + 1,
                        metric, false, first, redoJob, again);
    for (std::size_t i = 0; i < merged.overflow.size(); ++i) {
      const std::int64_t row = merged.overflow[i];
      dropSelf(redo, std::int64_t(i), std::int32_t(row), k, merged.ids.get() + row * k,
               merged.distances.get() + row * k);
    }
    result.report.precision +=
        "; " + std::to_string(merged.overflow.size()) + " rows searched again";
    lap("rows searched again");
  }
  result.ids = Matrix<std::int32_t>(merged.ids.get(), n, k, merged.ids);
  result.distances = Matrix<float>(merged.distances.get(), n, k, merged.distances);
  result.report.device = describeBackend(context);
  result.report.detail += std::string(result.report.detail.empty() ? "" : ", ") +
                          "pairs split over " + std::to_string(parts) + " GPUs (" +
                          sharesBalance(finished, exchange) + ")";
  result.fallbackRows = std::int64_t(merged.overflow.size());
  result.candidatesPerRow =
      n > result.fallbackRows ? double(merged.candidates) / double(n - result.fallbackRows) : 0.0;
  return result;
}

/// The CPU's exact search.
KnnResult exactOnCpu(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                     Metric metric, bool graph, const Context& context, JobControl& job,
                     const ExactKnnParams& params) {
  // Low dimensions: STEP's sorted clusters prune most of the base where the data's intrinsic
  // dimension is low (tiles asked for explicitly, and small data, keep the GEMM path). Scoring
  // a twentieth of the base in float64 costs about what the GEMM path does (measured: 100k × 3
  // Gaussian, STEP 2.9 s vs Faiss 27.9 s; 100k × 8 Gaussian scores 59% and loses).
  if (params.pruning == ExactKnnParams::Pruning::Always && metric == Metric::L2)
    return *knn::stepSearch(queries, base, k, metric, graph, context, job, 2.0);
  if (knn::stepApplies(base.cols, metric) && base.rows >= 4096 && params.queryTile == 0 &&
      params.baseTile == 0 && params.pruning == ExactKnnParams::Pruning::Auto)
    if (auto step = knn::stepSearch(queries, base, k, metric, graph, context, job, 0.05))
      return std::move(*step);
  return knn::exactSearchCpu(queries, base, k, metric, graph, context, job, params);
}

KnnResult run(const MatrixView<float>& queries, const MatrixView<float>& base, int k, Metric metric,
              bool graph, const Context& context, JobControl& job, const ExactKnnParams& params) {
  // At the log's debug level: the data's check, and the wait for a device still starting (a
  // cold CLI run's GPU starts while its files are read).
  LogLaps lap(context, "exact kNN:");
  validate(queries, base, k, graph);
  lap("data checked");
  std::string fallback;
  KnnResult result = gpu::onGpuOrCpu<gpu::KnnDevice>(
      context,
      [&](gpu::KnnDevice& gpu) {
        lap("device ready");
        const std::vector<int> devices = gpu::spreadDevices(context);
        const bool spread =
            devices.size() > 1 && queries.rows >= kMinRowsPerDevice * std::int64_t(devices.size());
        ExactKnnParams rest = params;
        if (spread && graph) {
          if (auto found = graphOnDevices(gpu, devices, base, k, metric, context, job, params))
            return std::move(*found);
          rest.pruning = ExactKnnParams::Pruning::Off; // STEP was tried: none need ask again
        }
        // A graph's shares ask for k + 1: not where that leaves STEP's k ≤ kStepMaxK, which one
        // GPU would take (large-k graphs run on one GPU).
        if (spread && (!graph || k < gpu::kStepMaxK))
          return exactOnDevices(gpu, devices, queries, base, k, metric, graph, context, job, rest);
        return exactOnGpu(gpu, queries, base, k, metric, graph, context, job, rest);
      },
      [&] { return exactOnCpu(queries, base, k, metric, graph, context, job, params); }, &fallback);
  result.report.fallback = fallback; // the result says why the CPU did the work
  return result;
}

} // namespace

bool gpuSearchIsFused(std::int64_t dim, int k) {
  return knn::gpuFusedTiles(dim, k);
}

KnnResult knnSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                    Metric metric, const Context& context, JobControl& job,
                    const ExactKnnParams& params) {
  return dispatch(queries, base, k, metric, false, context, job, params);
}

KnnResult knnGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                   JobControl& job, const ExactKnnParams& params) {
  return dispatch(data, data, k, metric, true, context, job, params);
}

namespace knn {

bool gpuStepMayRun(const MatrixView<float>& base, int k, Metric metric, const Context& context,
                   bool asked) {
  // The clusters hold the whole base on the device: not within a budget smaller than it.
  const bool withinBudget =
      context.memoryBudget == 0 ||
      std::uint64_t(base.rows) * std::uint64_t(base.cols) * 12 <= context.memoryBudget;
  return metric == Metric::L2 && k <= gpu::kStepMaxK && withinBudget && (asked || base.cols <= 256);
}

std::optional<KnnResult> clusteredGraphIfCheap(const MatrixView<float>& data, int k, Metric metric,
                                               Backend backend, const Context& context,
                                               JobControl& job, double maxScoredShare) {
  if (!gpuStepMayRun(data, k, metric, context, false) || backend != Backend::Cuda)
    return std::nullopt; // before the data's scan: NN-Descent scans it anyway
  validate(data, data, k, true);
  const auto started = std::chrono::steady_clock::now();
  gpu::KnnDevice* gpu = gpu::device<gpu::KnnDevice>();
  if (!gpu)
    return std::nullopt; // this plugin's kNN interface was refused: the general path says why
  std::optional<KnnResult> found;
  // STEP's clusters and a probe that gives up early (from 500,000 rows a sample decides first).
  // A sample in fewer clusters than the whole data's tells nothing: blobs 1M (1,000 blobs) in
  // 3,906 clusters score 0.1% of the data a row, a 65,536-row sample in 256 clusters 99% of
  // itself; the sample's clusters are as many as the whole data's.
  gpu::tryOptionalGpuPath(
      [&] { found = gpu->stepSearch(data, data, k, true, context, job, maxScoredShare); });
  if (found)
    found->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return found;
}

} // namespace knn

KnnResult knnReference(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                       Metric metric, bool excludeSelf, const std::vector<std::int64_t>& rows,
                       int threads) {
  validate(queries, base, k, excludeSelf);
  const std::int64_t n = rows.empty() ? queries.rows : std::int64_t(rows.size());
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n * k));
  std::vector<float> dists(static_cast<std::size_t>(n * k));
  Context context;
  context.threads = threads;
#pragma omp parallel for num_threads(effectiveThreads(context)) schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t q = rows.empty() ? r : rows[r];
    knn::directRow(queries.row(q), base, metric, k, excludeSelf ? q : -1, ids.data() + r * k,
                   dists.data() + r * k);
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), n, k);
  result.distances = Matrix<float>(std::move(dists), n, k);
  result.report.device = "CPU";
  result.report.setMethod(KnnMethod::Reference);
  return result;
}

std::string compareWithReference(const KnnResult& got, const KnnResult& ref,
                                 const std::vector<std::int64_t>& gotRows) {
  const int k = int(ref.ids.cols());
  if (got.ids.cols() != k)
    return "k differs: " + std::to_string(got.ids.cols()) + " vs " + std::to_string(k);
  if (gotRows.empty() && got.ids.rows() != ref.ids.rows())
    return "row counts differ";
  auto close = [](float a, float b) {
    return std::abs(a - b) <= 1e-6f * std::max(1.0f, std::abs(b));
  };
  for (std::int64_t r = 0; r < ref.ids.rows(); ++r) {
    const std::int64_t g = gotRows.empty() ? r : gotRows[std::size_t(r)];
    const float* rd = ref.distances.row(r);
    for (int c = 0; c < k; ++c) {
      const float gd = got.distances.row(g)[c];
      if (!close(gd, rd[c]))
        return "row " + std::to_string(g) + ", rank " + std::to_string(c) + ": distance " +
               std::to_string(gd) + ", float64 says " + std::to_string(rd[c]);
      const bool tied = (c > 0 && close(rd[c - 1], rd[c])) ||
                        (c + 1 < k && close(rd[c + 1], rd[c])) ||
                        c == k - 1; // the last may tie with ranks past k
      if (got.ids.row(g)[c] != ref.ids.row(r)[c] && !tied)
        return "row " + std::to_string(g) + ", rank " + std::to_string(c) + ": id " +
               std::to_string(got.ids.row(g)[c]) + ", float64 says " +
               std::to_string(ref.ids.row(r)[c]);
    }
  }
  return {};
}

double recallAtK(const MatrixView<std::int32_t>& found, const MatrixView<std::int32_t>& truth,
                 int k, const MatrixView<float>& queries, const MatrixView<float>& base,
                 Metric metric, const std::vector<std::int64_t>& queryRows) {
  NEARSCAPE_EXPECTS(found.rows == truth.rows, "found and truth have different row counts");
  NEARSCAPE_EXPECTS(found.cols >= k && truth.cols >= k,
                    "recall@" + std::to_string(k) + " needs at least k columns");
  for (std::int64_t r = 0; r < truth.rows; ++r) // checked before the loop: no throw inside it
    NEARSCAPE_EXPECTS(truth.row(r)[k - 1] >= 0 && truth.row(r)[k - 1] < base.rows,
                      "truth id " + std::to_string(truth.row(r)[k - 1]) + " at row " +
                          std::to_string(r) + " is out of range");
  std::int64_t hits = 0;
#pragma omp parallel for reduction(+ : hits) schedule(dynamic, 16)
  for (std::int64_t r = 0; r < found.rows; ++r) {
    const float* q = queries.row(queryRows.empty() ? r : queryRows[r]);
    const std::int32_t kthId = truth.row(r)[k - 1];
    const double kth = exactDistance(q, base.row(kthId), base.cols, metric);
    const double limit = kth + 1e-6 * std::abs(kth);
    for (int c = 0; c < k; ++c) {
      const std::int32_t id = found.row(r)[c];
      if (id >= 0 && id < base.rows && exactDistance(q, base.row(id), base.cols, metric) <= limit)
        ++hits;
    }
  }
  return double(hits) / double(found.rows * k);
}

} // namespace nearscape

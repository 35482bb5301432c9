#include "analysis/AllPairsCpu.h"

#include "nearscape/core/Error.h"
#include "util/Blas.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

namespace nearscape::analysis {
namespace {

void gemm(const float* a, std::int64_t ra, const float* b, std::int64_t rb, std::int64_t d,
          float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(ra), int(rb), int(d), 1.0f, a, int(d), b,
              int(d), 0.0f, c, int(rb));
}

} // namespace

std::unique_ptr<float[]> packInTileOrder(const MatrixView<float>& data, const TilePlan& plan,
                                         int threads) {
  std::unique_ptr<float[]> packed(new float[std::size_t(data.rows * data.cols)]);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t t = 0; t < plan.tiles(); ++t)
    plan.packTile(data, t, packed.get() + plan.start[t] * data.cols);
  return packed;
}

void sortPairs(std::vector<NearPair>& pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const NearPair& x, const NearPair& y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  });
}

std::vector<NearPair> keepWithin(const MatrixView<float>& data, const TilePlan& plan,
                                 const std::int32_t* positions, std::int64_t count,
                                 double threshold, int threads) {
  std::vector<std::vector<NearPair>> found(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    std::vector<NearPair>& mine = found[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t c = 0; c < count; ++c) {
      const std::int32_t x = plan.order[positions[2 * c]], y = plan.order[positions[2 * c + 1]];
      const double exact = exactDistance(data.row(x), data.row(y), data.cols, plan.metric);
      if (exact <= threshold)
        mine.push_back({std::min(x, y), std::max(x, y), exact});
    }
  }
  std::vector<NearPair> pairs;
  for (auto& part : found)
    pairs.insert(pairs.end(), part.begin(), part.end());
  sortPairs(pairs);
  return pairs;
}

NearPairs pairsWithinCpu(const MatrixView<float>& data, const TilePlan& plan, double threshold,
                         std::int64_t maxPairs, const Context& context, JobControl& job) {
  const std::int64_t n = data.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  const Metric metric = plan.metric;
  const double limit = approxUnits(metric, threshold);
  // Row i proposes j when the GEMM's value is within its rounding bound of the threshold.
  std::vector<float> proposeUpTo(static_cast<std::size_t>(n)), norms(proposeUpTo.size());
  for (std::int64_t m = 0; m < n; ++m) {
    norms[m] = plan.norms[plan.order[m]];
    proposeUpTo[m] = float(limit + knn::errorBound(metric, d, norms[m], plan.maxNorm2, 0.0));
  }
  const std::vector<TilePair> work = plan.pairsBelow(limit, threads);
  const std::unique_ptr<float[]> packed = packInTileOrder(data, plan, threads);
  const std::int64_t tileRows = plan.rowsOf(0);
  // Runs of up to kRun consecutive tiles paired with the same tile go through one GEMM: fewer,
  // wider calls keep BLAS's threads busy (measured on fashion-mnist, 2 cores).
  constexpr std::int64_t kRun = 8;
  std::vector<float> C(static_cast<std::size_t>(tileRows * tileRows * kRun));
  std::vector<std::vector<NearPair>> found(static_cast<std::size_t>(threads));
  blas::setThreads(threads);
  // Pairs are kept while they are few; past kKeptWhileCounting they are counted first.
  const std::int64_t keptWhileCounting = std::min(maxPairs, kKeptWhileCounting);
  NearPairs result;
  std::int64_t candidates = 0;
  auto pass = [&](bool keepAll) { // the pairs' count when it stopped keeping them, else −1
    bool keeping = true;
    std::int64_t total = 0;
    candidates = 0;
    for (std::size_t w = 0, next = 0; w < work.size(); w = next) {
      job.check();
      next = w + 1; // work is ordered by (a, b): extend over b + 1, b + 2, … of the same a
      while (next < work.size() && std::int64_t(next - w) < kRun && work[next].a == work[w].a &&
             work[next].b == work[next - 1].b + 1)
        ++next;
      const std::int64_t A = work[w].a;
      const std::int64_t a0 = plan.start[A], ra = plan.rowsOf(A);
      const std::int64_t b0 = plan.start[work[w].b], rb = plan.start[work[next - 1].b + 1] - b0;
      gemm(packed.get() + a0 * d, ra, packed.get() + b0 * d, rb, d, C.data());
      std::int64_t proposedHere = 0, keptHere = 0;
#pragma omp parallel num_threads(threads) reduction(+ : proposedHere, keptHere)
      {
        std::vector<NearPair>& mine = found[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 16)
        for (std::int64_t i = 0; i < ra; ++i) {
          const float* c = C.data() + i * rb;
          const float t = proposeUpTo[a0 + i], ni = norms[a0 + i];
          const std::int32_t id = plan.order[a0 + i];
          // Places after a0 + i only: a tile with itself gives each pair once.
          for (std::int64_t j = std::max<std::int64_t>(0, a0 + i + 1 - b0); j < rb; ++j) {
            if (knn::approxDistance(metric, ni, norms[b0 + j], c[j]) > t)
              continue;
            ++proposedHere;
            const std::int32_t other = plan.order[b0 + j];
            const double exact = exactDistance(data.row(id), data.row(other), d, metric);
            if (exact <= threshold) {
              if (keeping)
                mine.push_back({std::min(id, other), std::max(id, other), exact});
              ++keptHere;
            }
          }
        }
      }
      candidates += proposedHere;
      total += keptHere;
      if (total > maxPairs)
        throw InvalidArgument("more than " + std::to_string(maxPairs) + " pairs lie within " +
                              std::to_string(threshold) + ": choose a smaller threshold");
      for (auto& part : found) { // moved out each run: the threads' vectors stay small
        result.pairs.insert(result.pairs.end(), part.begin(), part.end());
        part.clear();
      }
      if (keeping && !keepAll && total > keptWhileCounting) {
        keeping = false;
        result.pairs = {};
      }
      job.progress(double(next) / double(work.size()),
                   keeping ? "pairs within the threshold"
                           : "counting the pairs within the threshold");
    }
    return keeping ? std::int64_t(-1) : total;
  };
  if (const std::int64_t count = pass(false); count >= 0) { // many: kept in a second pass
    result.pairs.reserve(std::size_t(count));
    pass(true);
  }
  for (auto& part : found)
    part = {};
  sortPairs(result.pairs);
  result.threshold = threshold;
  result.tilePairs = std::int64_t(work.size());
  result.tilePairsAll = plan.tiles() * (plan.tiles() + 1) / 2;
  result.candidates = candidates;
  result.report.device = "CPU (" + std::to_string(threads) + " threads)";
  return result;
}

std::vector<std::int32_t> tileNearestCpu(const MatrixView<float>& data, const TilePlan& plan,
                                         const Context& context, JobControl& job) {
  const std::int64_t n = data.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  const std::int64_t tileRows = plan.rowsOf(0);
  std::vector<float> packed(static_cast<std::size_t>(tileRows * d)),
      C(static_cast<std::size_t>(tileRows * tileRows));
  std::vector<std::int32_t> nearest(static_cast<std::size_t>(n), -1);
  blas::setThreads(threads);
  for (std::int64_t t = 0; t < plan.tiles(); ++t) {
    job.check();
    const std::int64_t t0 = plan.start[t], rows = plan.rowsOf(t);
    plan.packTile(data, t, packed.data());
    gemm(packed.data(), rows, packed.data(), rows, d, C.data());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) {
      float best = std::numeric_limits<float>::infinity();
      const float ni = plan.norms[plan.order[t0 + i]];
      for (std::int64_t j = 0; j < rows; ++j) {
        const float v =
            knn::approxDistance(plan.metric, ni, plan.norms[plan.order[t0 + j]], C[i * rows + j]);
        if (j != i && v < best) {
          best = v;
          nearest[t0 + i] = std::int32_t(t0 + j);
        }
      }
    }
    job.progress(double(t + 1) / double(plan.tiles()), "nearest within each tile");
  }
  return nearest;
}

} // namespace nearscape::analysis

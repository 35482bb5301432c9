#include "nearscape/cluster/KMeans.h"

#include "cluster/KMeansDevice.h"
#include "gpu/Dispatch.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Sampling.h"
#include "util/Blas.h"
#include "util/Hash.h"
#include "util/Normalise.h"
#include "util/VectorDistance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace nearscape {
namespace {

/// k-means++ seeding (Arthur & Vassilvitskii 2007) with a counter-based draw per step.
std::vector<float> plusPlusSeeds(const MatrixView<float>& x, int k, std::uint64_t seed, int threads,
                                 JobControl& job) {
  const std::int64_t n = x.rows, d = x.cols;
  std::vector<float> c(std::size_t(k) * std::size_t(d));
  std::vector<double> best(std::size_t(n), std::numeric_limits<double>::infinity());
  std::int64_t pick = std::int64_t(mixBits(seed) % std::uint64_t(n));
  for (int j = 0; j < k; ++j) {
    std::copy(x.row(pick), x.row(pick) + d, c.data() + std::size_t(j) * std::size_t(d));
    double total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      best[std::size_t(i)] =
          std::min(best[std::size_t(i)], double(simd::l2Squared(x.row(i), x.row(pick), d)));
      total += best[std::size_t(i)];
    }
    if ((j & 15) == 0)
      job.check();
    const double target =
        double(mixBits(seed + 0x9e37u * std::uint64_t(j + 1)) >> 11) * 0x1.0p-53 * total;
    double run = 0;
    pick = n - 1;
    for (std::int64_t i = 0; i < n; ++i)
      if ((run += best[std::size_t(i)]) >= target && best[std::size_t(i)] > 0) {
        pick = i;
        break;
      }
  }
  return c;
}

/// The CPU's nearestCentroids: a float32 GEMM per tile of rows, then an argmin or a partial sort.
std::vector<std::int32_t> nearestCentroidsCpu(const MatrixView<float>& data,
                                              const MatrixView<float>& centroids, int count,
                                              Metric metric, const Context& context,
                                              JobControl& job) {
  const std::int64_t n = data.rows, k = centroids.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  std::vector<float> norms(std::size_t(k), 0.0f);
  if (metric == Metric::L2)
    for (std::int64_t j = 0; j < k; ++j)
      norms[std::size_t(j)] = simd::dot(centroids.row(j), centroids.row(j), d);
  std::vector<std::int32_t> out(std::size_t(n) * std::size_t(count));
  const std::int64_t tile =
      std::max<std::int64_t>(64, std::min<std::int64_t>(4096, (64 << 20) / (4 * k)));
  std::vector<float> dots(std::size_t(tile * k));
  for (std::int64_t r0 = 0; r0 < n; r0 += tile) {
    job.check(); // a tile: a few milliseconds (k-means of 1,024 clusters took 200 ms a pass)
    const std::int64_t rows = std::min(tile, n - r0);
    blas::setThreads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(rows), int(k), int(d), 1.0f,
                data.row(r0), int(d), centroids.data, int(d), 0.0f, dots.data(), int(k));
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::pair<float, std::int32_t>> scored(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < rows; ++i) {
        const float* dot = dots.data() + i * k;
        std::int32_t* o = out.data() + (r0 + i) * count;
        if (count == 1) {
          float best = std::numeric_limits<float>::infinity();
          std::int32_t arg = 0;
          for (std::int64_t j = 0; j < k; ++j) {
            const float s = metric == Metric::L2 ? norms[std::size_t(j)] - 2.0f * dot[j] : -dot[j];
            if (s < best)
              best = s, arg = std::int32_t(j);
          }
          o[0] = arg;
          continue;
        }
        for (std::int64_t j = 0; j < k; ++j)
          scored[std::size_t(j)] = {metric == Metric::L2 ? norms[std::size_t(j)] - 2.0f * dot[j]
                                                         : -dot[j],
                                    std::int32_t(j)};
        std::partial_sort(scored.begin(), scored.begin() + count, scored.end());
        for (int j = 0; j < count; ++j)
          o[j] = scored[std::size_t(j)].second;
      }
    }
  }
  return out;
}

} // namespace

std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                           const MatrixView<float>& centroids, int count,
                                           Metric metric, const Context& context, JobControl& job) {
  NEARSCAPE_EXPECTS(centroids.cols == data.cols, "centroids and data differ in dimension");
  NEARSCAPE_EXPECTS(count >= 1 && count <= centroids.rows, "count is out of range");
  return gpu::onGpuOrCpu<gpu::KMeansDevice>(
      context,
      [&](gpu::KMeansDevice& gpu) {
        return gpu.nearestCentroids(data, centroids, count, metric, context);
      },
      [&] { return nearestCentroidsCpu(data, centroids, count, metric, context, job); });
}

KMeansResult kmeans(const MatrixView<float>& data, const KMeansParams& params, Metric metric,
                    const Context& context, JobControl& job) {
  NEARSCAPE_EXPECTS(!data.empty(), "the data is empty");
  NEARSCAPE_EXPECTS(params.clusters >= 1 && params.clusters <= data.rows,
                    "k-means: " + std::to_string(params.clusters) +
                        " clusters is out of range [1, " + std::to_string(data.rows) + "]");
  NEARSCAPE_EXPECTS(params.iterations >= 1, "k-means needs at least one iteration");
  requireFinite(data, "the data");
  const int threads = effectiveThreads(context);
  const int k = params.clusters;
  const std::int64_t d = data.cols;
  const bool spherical = metric == Metric::Cosine;

  // The training sample (normalised for cosine).
  const std::vector<std::int64_t> rows = seededSample(
      data.rows, std::int64_t(k) * std::max(1, params.maxPointsPerCluster), context.seed);
  const std::int64_t m = std::int64_t(rows.size());
  std::vector<float> sample(std::size_t(m) * std::size_t(d));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    float* out = sample.data() + i * d;
    if (spherical)
      normaliseRow(data.row(rows[std::size_t(i)]), d, out);
    else
      std::copy(data.row(rows[std::size_t(i)]), data.row(rows[std::size_t(i)]) + d, out);
  }
  const MatrixView<float> x{sample.data(), m, d};

  std::vector<float> c;
  if (params.plusPlus) {
    c = plusPlusSeeds(x, k, context.seed, threads, job);
  } else {
    c.resize(std::size_t(k) * std::size_t(d));
    const std::vector<std::int64_t> seeds = seededSample(m, k, context.seed ^ 0x5eedull);
    for (int j = 0; j < k; ++j)
      std::copy(x.row(seeds[std::size_t(j)]), x.row(seeds[std::size_t(j)]) + d,
                c.data() + std::size_t(j) * std::size_t(d));
  }

  const Metric assignBy = spherical ? Metric::InnerProduct : Metric::L2;
  KMeansResult result;
  std::vector<std::int32_t> assignment;
  for (int it = 0; it < params.iterations; ++it) {
    job.check();
    job.progress(double(it) / params.iterations, "k-means");
    assignment = nearestCentroids(x, {c.data(), k, d}, 1, assignBy, context, job);
    // Means in float64, summed in a fixed order (deterministic for any thread count).
    std::vector<double> sums(std::size_t(k) * std::size_t(d), 0.0);
    std::vector<std::int64_t> counts(std::size_t(k), 0);
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int32_t a = assignment[std::size_t(i)];
      ++counts[std::size_t(a)];
      double* s = sums.data() + std::size_t(a) * std::size_t(d);
      const float* row = x.row(i);
      for (std::int64_t t = 0; t < d; ++t)
        s[t] += row[t];
    }
    for (int j = 0; j < k; ++j) {
      float* cj = c.data() + std::size_t(j) * std::size_t(d);
      if (counts[std::size_t(j)] == 0) { // emptied: restart from a seeded random sample row
        const std::int64_t r = std::int64_t(
            mixBits(context.seed + 0x51u * std::uint64_t(it * k + j) + 7) % std::uint64_t(m));
        std::copy(x.row(r), x.row(r) + d, cj);
        continue;
      }
      const double* s = sums.data() + std::size_t(j) * std::size_t(d);
      for (std::int64_t t = 0; t < d; ++t)
        cj[t] = float(s[t] / double(counts[std::size_t(j)]));
      if (spherical)
        normaliseRow(cj, d, cj);
    }
    result.iterations = it + 1;
  }
  assignment = nearestCentroids(x, {c.data(), k, d}, 1, assignBy, context, job);
  double inertia = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : inertia) schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const float* cj = c.data() + std::size_t(assignment[std::size_t(i)]) * std::size_t(d);
    inertia += spherical ? 1.0 - double(simd::dot(x.row(i), cj, d))
                         : double(simd::l2Squared(x.row(i), cj, d));
  }
  result.inertia = inertia / double(m);
  result.centroids = Matrix<float>(std::move(c), k, d);
  job.progress(1.0, "k-means");
  return result;
}

} // namespace nearscape

#include "knn/Step.h"

#include "nearscape/cluster/KMeans.h"
#include "nearscape/core/Error.h"
#include "util/BoundedHeap.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>

namespace nearscape::knn {
namespace {

/// Float64 Euclidean distance.
double euclid(const double* a, const double* b, std::int64_t d) {
  double s = 0;
  for (std::int64_t t = 0; t < d; ++t)
    s += (a[t] - b[t]) * (a[t] - b[t]);
  return std::sqrt(s);
}

std::vector<double> inDouble(const MatrixView<float>& m) {
  return std::vector<double>(m.data, m.data + m.size());
}

} // namespace

bool stepApplies(std::int64_t d, Metric metric) {
  return d <= 16 && metric == Metric::L2;
}

std::optional<KnnResult> stepSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                                    int k, Metric metric, bool excludeSelf, const Context& context,
                                    JobControl& job, double maxScoredShare) {
  NEARSCAPE_EXPECTS(metric == Metric::L2,
                    "STEP takes L2 only (its pruning is the triangle inequality)");
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t n = base.rows, d = base.cols, nq = queries.rows;
  const int threads = effectiveThreads(context);
  // Clusters: seeded k-means (the paper's p = 512 for large data; about 64 members a cluster
  // below), each with its members listed together and its bounding sphere (centre, radius).
  const int p = int(std::clamp<std::int64_t>(n / 64, 1, 512));
  KMeansParams kp;
  kp.clusters = p;
  kp.iterations = 8;
  Context cpu = context;
  cpu.backend = Backend::Cpu;
  const KMeansResult km = kmeans(base, kp, Metric::L2, cpu, job);
  const std::vector<std::int32_t> label =
      nearestCentroids(base, km.centroids.view(), 1, Metric::L2, cpu);
  const std::vector<double> x = inDouble(base), q = inDouble(queries);
  std::vector<std::int64_t> start(std::size_t(p) + 1, 0);
  for (const std::int32_t c : label)
    ++start[std::size_t(c) + 1];
  for (int c = 0; c < p; ++c)
    start[std::size_t(c) + 1] += start[std::size_t(c)];
  std::vector<std::int32_t> members(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::int64_t i = 0; i < n; ++i)
      members[std::size_t(fill[std::size_t(label[std::size_t(i)])]++)] = std::int32_t(i);
  }
  // Sphere centres: the members' float64 means; radii: the farthest member, rounded up a hair so
  // that float64 rounding can never prune a member that belongs.
  std::vector<double> centre(std::size_t(p) * std::size_t(d), 0.0), radius(std::size_t(p), 0.0);
  for (int c = 0; c < p; ++c) {
    const std::int64_t a = start[std::size_t(c)], b = start[std::size_t(c) + 1];
    double* ctr = centre.data() + std::size_t(c) * std::size_t(d);
    for (std::int64_t m = a; m < b; ++m)
      for (std::int64_t t = 0; t < d; ++t)
        ctr[t] += x[std::size_t(members[std::size_t(m)]) * std::size_t(d) + std::size_t(t)];
    for (std::int64_t t = 0; t < d && b > a; ++t)
      ctr[t] /= double(b - a);
    for (std::int64_t m = a; m < b; ++m)
      radius[std::size_t(c)] = std::max(
          radius[std::size_t(c)],
          euclid(x.data() + std::size_t(members[std::size_t(m)]) * std::size_t(d), ctr, d));
    radius[std::size_t(c)] = radius[std::size_t(c)] * (1 + 1e-12) + 1e-300;
  }
  job.check();

  std::vector<std::int32_t> ids(std::size_t(nq) * std::size_t(k));
  std::vector<float> dists(ids.size());
  std::int64_t visited = 0;
  auto searchRows = [&](std::int64_t from, std::int64_t to) {
    std::int64_t scored = 0;
#pragma omp parallel num_threads(threads) reduction(+ : scored)
    {
      std::vector<std::pair<double, int>> order(static_cast<std::size_t>(p));
      using Item = std::pair<double, std::int32_t>; // (distance, id): a max-heap of the k best
      std::vector<Item> heap;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = from; i < to; ++i) {
        if (job.stopRequested())
          continue;
        const double* qi = q.data() + std::size_t(i) * std::size_t(d);
        for (int c = 0; c < p; ++c) // Lemma 1: no member of c lies nearer than this
          order[std::size_t(c)] = {
              std::max(0.0, euclid(qi, centre.data() + std::size_t(c) * std::size_t(d), d) -
                                radius[std::size_t(c)]),
              c};
        // Clusters in order of their bound, taken from a min-heap: most queries stop after a few.
        std::make_heap(order.begin(), order.end(), std::greater<>());
        heap.clear();
        for (auto end = order.end(); end != order.begin(); --end) {
          std::pop_heap(order.begin(), end, std::greater<>());
          const auto [bound, c] = *(end - 1);
          if (int(heap.size()) == k && bound > heap.front().first)
            break; // this cluster and every later one lie beyond the k-th: pruned
          for (std::int64_t m = start[std::size_t(c)]; m < start[std::size_t(c) + 1]; ++m) {
            const std::int32_t j = members[std::size_t(m)];
            if (excludeSelf && j == i)
              continue;
            const Item item{euclid(qi, x.data() + std::size_t(j) * std::size_t(d), d), j};
            ++scored;
            keepSmallest(heap, item, k);
          }
        }
        std::sort_heap(heap.begin(), heap.end());
        for (int c = 0; c < k; ++c) {
          ids[std::size_t(i) * std::size_t(k) + std::size_t(c)] = heap[std::size_t(c)].second;
          dists[std::size_t(i) * std::size_t(k) + std::size_t(c)] =
              float(heap[std::size_t(c)].first);
        }
      }
    }
    return scored;
  };
  // The first queries tell how well the clusters prune this data; where they score more than
  // `maxScoredShare` of the base, the GEMM path is the faster exact search.
  const std::int64_t probe = std::min<std::int64_t>(nq, 256);
  visited = searchRows(0, probe);
  job.check();
  if (double(visited) > maxScoredShare * double(n) * double(probe))
    return std::nullopt;
  visited += searchRows(probe, nq);
  job.check();
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cpu;
  result.report.device = "CPU (" + std::to_string(threads) + " threads)";
  result.report.setMethod(KnnMethod::Step);
  result.report.detail = std::to_string(p) + " clusters, " +
                         std::to_string(visited / std::max<std::int64_t>(1, nq)) + " of " +
                         std::to_string(n) + " items scored a query";
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::knn

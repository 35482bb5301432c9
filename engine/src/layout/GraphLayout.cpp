// A kNN-graph layout after UMAP (McInnes, Healy & Melville 2018): fuzzy simplicial weights from
// the kNN distances, attraction along edges with the curve 1 / (1 + a·d^2b), repulsion by
// negative sampling, SGD whose rate decays linearly. Unlike umap-learn's Hogwild updates, each
// epoch reads the previous epoch's positions and every node moves only itself (by its own edges
// and negative samples), so the result is the same for a seed whatever the number of threads.
#include "nearscape/layout/GraphLayout.h"

#include "gpu/Dispatch.h"
#include "layout/LayoutDevice.h"
#include "layout/LayoutEpochCpu.h"
#include "layout/LayoutStep.h"
#include "nearscape/core/Error.h"
#include "nearscape/graph/Graph.h"
#include "util/BoundedHeap.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nearscape {
namespace {

/// a, b of the curve 1 / (1 + a·x^2b) fitted to umap-learn's target: 1 up to minDist, then
/// exp(−(x − minDist)) (spread 1). A coarse-to-fine grid search is plenty for two parameters.
void fitCurve(float minDist, double& a, double& b) {
  auto loss = [minDist](double a, double b) {
    double s = 0;
    for (int i = 1; i <= 300; ++i) {
      const double x = 3.0 * i / 300.0;
      const double target = x < minDist ? 1.0 : std::exp(-(x - minDist));
      const double y = 1.0 / (1.0 + a * std::pow(x, 2 * b));
      s += (y - target) * (y - target);
    }
    return s;
  };
  double bestA = 1.5, bestB = 0.9, best = loss(bestA, bestB);
  double spanA = 1.4, spanB = 0.8;
  for (int round = 0; round < 6; ++round) {
    const double ca = bestA, cb = bestB;
    for (int i = -10; i <= 10; ++i)
      for (int j = -10; j <= 10; ++j) {
        const double ta = ca * std::exp(spanA * i / 10.0), tb = cb + spanB * j / 10.0;
        if (tb <= 0.05)
          continue;
        const double l = loss(ta, tb);
        if (l < best) {
          best = l;
          bestA = ta;
          bestB = tb;
        }
      }
    spanA /= 4;
    spanB /= 4;
  }
  a = bestA;
  b = bestB;
}

/// UMAP's smooth kNN weights, symmetrised by the fuzzy union w = a + b − a·b.
UndirectedGraph fuzzyGraph(const MatrixView<std::int32_t>& ids, const MatrixView<float>& dist,
                           int threads) {
  const std::int64_t n = ids.rows, k = ids.cols;
  std::vector<float> w(static_cast<std::size_t>(n * k), 0.0f);
  const double target = std::log2(double(k));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float* d = dist.row(i);
    const std::int32_t* nb = ids.row(i);
    double rho = 0;
    for (std::int64_t c = 0; c < k; ++c)
      if (nb[c] >= 0 && d[c] > 0) {
        rho = d[c];
        break;
      }
    double lo = 0, hi = std::numeric_limits<double>::infinity(), sigma = 1;
    for (int it = 0; it < 64; ++it) {
      double s = 0;
      for (std::int64_t c = 0; c < k; ++c)
        if (nb[c] >= 0)
          s += std::exp(-std::max(0.0, d[c] - rho) / sigma);
      if (std::abs(s - target) < 1e-5)
        break;
      if (s > target) {
        hi = sigma;
        sigma = (lo + hi) / 2;
      } else {
        lo = sigma;
        sigma = std::isinf(hi) ? sigma * 2 : (lo + hi) / 2;
      }
    }
    for (std::int64_t c = 0; c < k; ++c)
      if (nb[c] >= 0 && nb[c] != i)
        w[std::size_t(i * k + c)] = float(std::exp(-std::max(0.0, d[c] - rho) / sigma));
  }
  std::vector<WeightedEdge> edges;
  edges.reserve(std::size_t(n * k));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < k; ++c) {
      const std::int32_t j = ids.row(i)[c];
      if (j >= 0 && j != i && w[std::size_t(i * k + c)] > 0)
        edges.push_back({std::int32_t(i), j, w[std::size_t(i * k + c)]});
    }
  // A pair listed from both ends is folded by the fuzzy union.
  return graphFromEdges(n, edges, DuplicateEdges::FuzzyUnion, threads);
}

} // namespace

Matrix<float> layoutGraph(const MatrixView<std::int32_t>& ids, const MatrixView<float>& distances,
                          const MatrixView<float>& initial, const LayoutParams& params,
                          const Context& context, JobControl& job, const LayoutProgress& progress) {
  const std::int64_t n = ids.rows;
  const int dim = params.dim;
  NEARSCAPE_EXPECTS(dim == 2 || dim == 3, "the layout's dimension must be 2 or 3");
  NEARSCAPE_EXPECTS(n >= 2, "a layout needs at least two items");
  NEARSCAPE_EXPECTS(distances.rows == n && distances.cols == ids.cols,
                    "ids and distances have different shapes");
  NEARSCAPE_EXPECTS(initial.rows == n && initial.cols == dim,
                    "the initial positions must be n × dim");
  const int threads = effectiveThreads(context);
  const int epochs = params.epochs > 0 ? params.epochs : (n <= 10000 ? 500 : 200);

  job.progress(0.0, "layout: fuzzy graph");
  const UndirectedGraph g = fuzzyGraph(ids, distances, threads);
  double a = 0, b = 0;
  fitCurve(params.minDist, a, b);
  float maxW = 0;
  for (float w : g.weights)
    maxW = std::max(maxW, w);
  // umap-learn drops edges sampled less than once over the whole run.
  std::vector<float> perSample(g.weights.size()), nextSample(g.weights.size());
  for (std::size_t e = 0; e < g.weights.size(); ++e) {
    const float w = g.weights[e];
    perSample[e] = w >= maxW / float(epochs) ? maxW / w : std::numeric_limits<float>::infinity();
    nextSample[e] = perSample[e];
  }

  // Initial positions scaled into [−10, 10], as umap-learn does with its spectral start.
  std::vector<float> cur(initial.data, initial.data + n * dim), next(cur.size());
  for (int c = 0; c < dim; ++c) {
    float lo = INFINITY, hi = -INFINITY;
    for (std::int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, cur[i * dim + c]);
      hi = std::max(hi, cur[i * dim + c]);
    }
    const float scale = hi > lo ? 20.0f / (hi - lo) : 1.0f;
    for (std::int64_t i = 0; i < n; ++i)
      cur[i * dim + c] = (cur[i * dim + c] - lo) * scale - 10.0f;
  }

  layout::EpochStep step;
  step.nodes = n;
  step.dim = dim;
  step.offsets = g.offsets.data();
  step.targets = g.targets.data();
  step.perSample = perSample.data();
  step.nextSample = nextSample.data();
  step.a = float(a);
  step.b = float(b);
  step.negativeSamples = params.negativeSamples;
  step.seed = context.seed;
  const auto report = [&](int epoch) {
    if (progress && (epoch % std::max(1, params.reportEvery) == 0 || epoch == epochs))
      progress(MatrixView<float>{cur.data(), n, dim}, double(epoch) / epochs);
    job.progress(double(epoch) / epochs, "layout: epoch " + std::to_string(epoch));
  };
  // A GPU short of memory leaves `cur` untouched: the CPU runs the same epochs from the start.
  gpu::onGpuOrCpu<gpu::LayoutDevice>(
      context,
      [&](gpu::LayoutDevice& gpu) {
        gpu.layoutEpochs(step, epochs, params.learningRate, params.reportEvery, cur.data(), context,
                         job, report);
      },
      [&] {
        for (int epoch = 0; epoch < epochs; ++epoch) {
          job.check();
          step.current = cur.data();
          step.next = next.data();
          step.epoch = epoch;
          step.alpha = params.learningRate * (1.0f - float(epoch) / float(epochs));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
          for (std::int64_t i = 0; i < n; ++i)
            layout::moveNodeCpu(step, i);
          cur.swap(next);
          report(epoch + 1);
        }
      });
  return Matrix<float>(std::move(cur), n, dim);
}

Matrix<std::int32_t> mapNeighbours(const MatrixView<float>& positions, int k, int threads,
                                   const std::vector<std::int64_t>& rows) {
  const std::int64_t n = positions.rows;
  const int dim = int(positions.cols);
  NEARSCAPE_EXPECTS(dim == 2 || dim == 3, "map neighbours need 2D or 3D positions");
  NEARSCAPE_EXPECTS(k >= 1 && k < n, "k must lie in [1, n − 1]");
  Context c;
  c.threads = threads;
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (std::int64_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) {
      lo[d] = std::min(lo[d], positions.row(i)[d]);
      hi[d] = std::max(hi[d], positions.row(i)[d]);
    }
  double volume = 1;
  for (int d = 0; d < dim; ++d)
    volume *= std::max(1e-12, double(hi[d] - lo[d]));
  // About k/2 points per cell.
  const double cell = std::pow(volume * std::max(1.0, k / 2.0) / double(n), 1.0 / dim);
  std::int64_t cells[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d)
    cells[d] = std::clamp<std::int64_t>(std::int64_t((hi[d] - lo[d]) / cell) + 1, 1,
                                        dim == 2 ? 4096 : 256);
  auto coord = [&](float v, int d) {
    return std::clamp<std::int64_t>(std::int64_t((v - lo[d]) / cell), 0, cells[d] - 1);
  };
  auto cellId = [&](const std::int64_t* x) {
    return dim == 2 ? x[1] * cells[0] + x[0] : (x[2] * cells[1] + x[1]) * cells[0] + x[0];
  };
  const std::int64_t total = cells[0] * cells[1] * cells[2];
  std::vector<std::int64_t> start(static_cast<std::size_t>(total + 1), 0),
      of(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t x[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d)
      x[d] = coord(positions.row(i)[d], d);
    of[i] = cellId(x);
    ++start[of[i] + 1];
  }
  for (std::int64_t t = 0; t < total; ++t)
    start[t + 1] += start[t];
  std::vector<std::int32_t> items(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::int64_t i = 0; i < n; ++i)
      items[fill[of[i]]++] = std::int32_t(i);
  }
  for (std::int64_t row : rows)
    NEARSCAPE_EXPECTS(row >= 0 && row < n, "a map row is out of range");
  const std::int64_t count = rows.empty() ? n : std::int64_t(rows.size());
  std::vector<std::int32_t> out(static_cast<std::size_t>(count * k));
  const std::int64_t maxRing = std::max({cells[0], cells[1], cells[2]});
#pragma omp parallel for num_threads(effectiveThreads(c)) schedule(dynamic, 256)
  for (std::int64_t at = 0; at < count; ++at) {
    const std::int64_t i = rows.empty() ? at : rows[std::size_t(at)];
    const float* p = positions.row(i);
    std::int64_t home[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d)
      home[d] = coord(p[d], d);
    std::vector<std::pair<double, std::int32_t>> best; // max-heap of the k best (dist², id)
    auto consider = [&](std::int32_t j) {
      if (j == i)
        return;
      double d2 = 0;
      for (int d = 0; d < dim; ++d)
        d2 += double(p[d] - positions.row(j)[d]) * double(p[d] - positions.row(j)[d]);
      keepSmallest(best, std::pair<double, std::int32_t>{d2, j}, k);
    };
    for (std::int64_t r = 0; r <= maxRing; ++r) {
      // Cells at Chebyshev distance exactly r from home.
      const std::int64_t z0 = dim == 3 ? -r : 0, z1 = dim == 3 ? r : 0;
      for (std::int64_t dz = z0; dz <= z1; ++dz)
        for (std::int64_t dy = -r; dy <= r; ++dy)
          for (std::int64_t dx = -r; dx <= r; ++dx) {
            if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) != r)
              continue;
            const std::int64_t x[3] = {home[0] + dx, home[1] + dy, home[2] + dz};
            bool inside = true;
            for (int d = 0; d < dim; ++d)
              inside = inside && x[d] >= 0 && x[d] < cells[d];
            if (!inside)
              continue;
            const std::int64_t id = cellId(x);
            for (std::int64_t t = start[id]; t < start[id + 1]; ++t)
              consider(items[t]);
          }
      // Anything in ring r + 1 or beyond lies at least r cells away.
      if (int(best.size()) == k && best.front().first <= (double(r) * cell) * (double(r) * cell))
        break;
    }
    std::sort_heap(best.begin(), best.end());
    for (int c2 = 0; c2 < k; ++c2)
      out[std::size_t(at * k + c2)] = best[std::size_t(c2)].second;
  }
  return Matrix<std::int32_t>(std::move(out), count, k);
}

LayoutQuality layoutQuality(const MatrixView<std::int32_t>& truth,
                            const MatrixView<float>& positions, int k, int threads) {
  NEARSCAPE_EXPECTS(truth.rows == positions.rows && truth.cols >= k,
                    "the true neighbours must be n × ≥k");
  const Matrix<std::int32_t> map = mapNeighbours(positions, k, threads);
  LayoutQuality q;
  q.perItem.resize(static_cast<std::size_t>(truth.rows));
  double sum = 0;
  for (std::int64_t i = 0; i < truth.rows; ++i) {
    int kept = 0;
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b)
        kept += truth.row(i)[a] == map.row(i)[b];
    q.perItem[i] = float(kept) / float(k);
    sum += q.perItem[i];
  }
  q.overall = truth.rows ? sum / double(truth.rows) : 0.0;
  return q;
}

} // namespace nearscape

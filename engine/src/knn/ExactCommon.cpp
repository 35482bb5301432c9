#include "knn/ExactCommon.h"

#include "util/BoundedHeap.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace nearscape::knn {

Packing makePacking(const MatrixView<float>& base, Metric metric, int threads) {
  Packing p;
  p.metric = metric;
  p.d = base.cols;
  if (metric == Metric::L2) {
    std::vector<double> sum(std::size_t(base.cols), 0.0);
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> local(std::size_t(base.cols), 0.0);
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < base.rows; ++i) {
        const float* x = base.row(i);
        for (std::int64_t j = 0; j < base.cols; ++j)
          local[j] += x[j];
      }
#pragma omp critical
      for (std::int64_t j = 0; j < base.cols; ++j)
        sum[j] += local[j];
    }
    p.mean.resize(sum.size());
    for (std::size_t j = 0; j < sum.size(); ++j)
      p.mean[j] = float(sum[j] / double(base.rows));
  }
  return p;
}

void Packing::pack(const MatrixView<float>& m, std::int64_t begin, std::int64_t end, float* out,
                   float* norms) const {
  for (std::int64_t i = begin; i < end; ++i) {
    const float* x = m.row(i);
    float* o = out + (i - begin) * d;
    double s = 0;
    switch (metric) {
    case Metric::L2:
      for (std::int64_t j = 0; j < d; ++j) {
        o[j] = x[j] - mean[j];
        s += double(o[j]) * o[j];
      }
      break;
    case Metric::InnerProduct:
      for (std::int64_t j = 0; j < d; ++j) {
        o[j] = x[j];
        s += double(o[j]) * o[j];
      }
      break;
    case Metric::Cosine: {
      double raw = 0;
      for (std::int64_t j = 0; j < d; ++j)
        raw += double(x[j]) * x[j];
      const double inv = raw > 0 ? 1.0 / std::sqrt(raw) : 0.0;
      for (std::int64_t j = 0; j < d; ++j) {
        o[j] = float(x[j] * inv);
        s += double(o[j]) * o[j];
      }
      break;
    }
    }
    norms[i - begin] = float(s);
  }
}

double errorBound(Metric metric, std::int64_t d, double queryNorm2, double maxBaseNorm2,
                  double inputRounding) {
  // GEMM of float32 inputs: d·u relative per dot product; inputs rounded to TF32 first add
  // 2·r (gemmBoundTerms says why the rest).
  const double dotRel = double(d) * kUnitRoundoff + 2.0 * inputRounding;
  const double baseNorm = std::sqrt(maxBaseNorm2);
  const BoundTerms t = gemmBoundTerms(metric, dotRel, std::sqrt(queryNorm2), baseNorm);
  return t.perBaseNorm * baseNorm + t.constant;
}

namespace {
struct Scored {
  double dist;
  std::int32_t id;
  bool operator<(const Scored& o) const { return dist < o.dist || (dist == o.dist && id < o.id); }
};
} // namespace

void finishRow(const float* query, const MatrixView<float>& base, Metric metric, int k,
               std::vector<std::int32_t>& ids, std::int32_t* outIds, float* outDist) {
  std::vector<Scored> scored(ids.size());
  for (std::size_t c = 0; c < ids.size(); ++c)
    scored[c] = {exactDistance(query, base.row(ids[c]), base.cols, metric), ids[c]};
  const std::size_t take = std::min<std::size_t>(std::size_t(k), scored.size());
  std::partial_sort(scored.begin(), scored.begin() + take, scored.end());
  for (std::size_t c = 0; c < take; ++c) {
    outIds[c] = scored[c].id;
    outDist[c] = float(scored[c].dist);
  }
}

void directRow(const float* query, const MatrixView<float>& base, Metric metric, int k,
               std::int64_t skip, std::int32_t* outIds, float* outDist) {
  std::priority_queue<Scored> heap; // the worst of the best k on top
  for (std::int64_t j = 0; j < base.rows; ++j) {
    if (j == skip)
      continue;
    const Scored s{exactDistance(query, base.row(j), base.cols, metric), std::int32_t(j)};
    if (int(heap.size()) < k)
      heap.push(s);
    else if (s < heap.top()) {
      heap.pop();
      heap.push(s);
    }
  }
  for (int c = int(heap.size()) - 1; c >= 0; --c) {
    outIds[c] = heap.top().id;
    outDist[c] = float(heap.top().dist);
    heap.pop();
  }
}

void directRows(const MatrixView<float>& queries, const std::vector<std::int64_t>& rows,
                const MatrixView<float>& base, Metric metric, int k,
                const std::function<std::int64_t(std::int64_t)>& skipOf, std::int32_t* outIds,
                float* outDist, int threads) {
  const std::int64_t nr = std::int64_t(rows.size());
  if (nr == 0)
    return;
  const std::int64_t nb = base.rows;
  const std::int64_t slices = std::min<std::int64_t>(nb / 4096, threads);
  if (slices <= nr) { // a row a thread keeps as many threads busy
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::int64_t r = 0; r < nr; ++r) {
      const std::int64_t i = rows[std::size_t(r)];
      directRow(queries.row(i), base, metric, k, skipOf(i), outIds + i * k, outDist + i * k);
    }
    return;
  }
  // Slices of the base, one a thread; each keeps its k best per row (a max-heap).
  std::vector<std::int64_t> skips(rows.size());
  for (std::int64_t r = 0; r < nr; ++r)
    skips[std::size_t(r)] = skipOf(rows[std::size_t(r)]);
  std::vector<std::vector<Scored>> best(std::size_t(slices * nr));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t j0 = nb * s / slices, j1 = nb * (s + 1) / slices;
    for (std::int64_t j = j0; j < j1; ++j) {
      for (std::int64_t r = 0; r < nr; ++r) {
        if (j == skips[std::size_t(r)])
          continue;
        const Scored c{
            exactDistance(queries.row(rows[std::size_t(r)]), base.row(j), base.cols, metric),
            std::int32_t(j)};
        keepSmallest(best[std::size_t(s * nr + r)], c, k);
      }
    }
  }
  // Each row's k best of its slices' bests, ordered by (distance, id) as directRow gives them.
  for (std::int64_t r = 0; r < nr; ++r) {
    std::vector<Scored> all;
    for (std::int64_t s = 0; s < slices; ++s) {
      const auto& heap = best[std::size_t(s * nr + r)];
      all.insert(all.end(), heap.begin(), heap.end());
    }
    const std::size_t take = std::min<std::size_t>(std::size_t(k), all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(take), all.end());
    const std::int64_t i = rows[std::size_t(r)];
    for (std::size_t c = 0; c < take; ++c) {
      outIds[i * k + std::int64_t(c)] = all[c].id;
      outDist[i * k + std::int64_t(c)] = float(all[c].dist);
    }
  }
}

} // namespace nearscape::knn

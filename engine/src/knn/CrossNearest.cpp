// The pairs that join a graph's components (knn/CrossNearest.h).
//
// The earlier search asked each member of a component C for its |C| + 1 nearest rows, so that one
// of them lay outside C: |C|² results held at once (3.2 GB for one 20,000-row component of 1M ×
// 64) and |C| · n distances, n² over all components. Here a row's nearest row *outside* its
// component is one filtered exact 1-NN scan (GEMM tiles, a candidate row per query, float64
// re-check: the exact search's scheme, knn/ExactCpu.cpp), so memory stays O(n). Only small
// components, or rounds whose |C| · n is affordable, scan every member; larger components descend
// from a few starts to a mutually nearest pair (the descent of alternating nearest neighbours,
// as in Borůvka-style bichromatic closest-pair heuristics), each step one scan.
#include "nearscape/knn/CrossNearest.h"

#include "knn/CandidateRow.h"
#include "knn/ExactCpu.h"
#include "nearscape/core/Error.h"
#include "util/Blas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

namespace nearscape {
namespace {

using knn::BaseSummary;
using knn::CandidateRow;

struct Found {
  std::int64_t row = -1;
  double dist = std::numeric_limits<double>::infinity();
};

bool better(double d, std::int64_t row, const Found& than) {
  return d < than.dist || (d == than.dist && row < than.row);
}

constexpr std::int64_t kQueryTile = 512;
constexpr std::int64_t kBaseTile = 4096;

/// Feeds one C row (a query's dots against a base tile) to its candidate row, skipping rows of
/// the query's own component.
template <Metric M>
void scanRow(const float* c, std::int64_t bb, float queryNorm, const float* baseNorms,
             const std::int32_t* baseLabels, std::int64_t baseStart, std::int32_t own,
             CandidateRow& row) {
  float t = row.threshold();
  for (std::int64_t j = 0; j < bb; ++j) {
    const float a = knn::approxDistance(M, queryNorm, baseNorms[j], c[j]);
    if (a <= t && baseLabels[j] != own) {
      row.push(a, std::int32_t(baseStart + j));
      t = row.threshold();
    }
  }
}

/// Each query row's exact nearest row of `data` whose label differs from its own (ties to the
/// smaller row). The whole data is scanned once per tile of 512 queries.
std::vector<Found> nearestWithOtherLabel(const MatrixView<float>& data, const BaseSummary& base,
                                         Metric metric, const std::vector<std::int64_t>& queries,
                                         const std::vector<std::int32_t>& label, int threads,
                                         JobControl& job) {
  const std::int64_t nq = std::int64_t(queries.size()), n = data.rows, d = data.cols;
  std::vector<Found> found(queries.size());
  if (nq == 0)
    return found;
  blas::setThreads(threads);
  const std::size_t cap = knn::candidateCap(1);
  const std::int64_t bq = std::min(kQueryTile, nq);
  std::vector<float> raw(static_cast<std::size_t>(bq * d)),
      qPacked(static_cast<std::size_t>(bq * d));
  std::vector<float> qNorms(static_cast<std::size_t>(bq)),
      C(static_cast<std::size_t>(bq * kBaseTile));
  std::vector<CandidateRow> rows(static_cast<std::size_t>(bq));
  std::vector<std::int32_t> own(static_cast<std::size_t>(bq));
  for (std::int64_t i0 = 0; i0 < nq; i0 += bq) {
    const std::int64_t m = std::min(nq, i0 + bq) - i0;
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t r = queries[std::size_t(i0 + i)];
      std::copy(data.row(r), data.row(r) + d, raw.begin() + i * d);
      own[std::size_t(i)] = label[std::size_t(r)];
    }
    base.packing.pack({raw.data(), m, d}, 0, m, qPacked.data(), qNorms.data());
    for (std::int64_t i = 0; i < m; ++i)
      rows[std::size_t(i)].reset(
          1, float(2.0 * knn::errorBound(metric, d, qNorms[std::size_t(i)], base.maxNorm2, 0.0)),
          cap);
    for (std::int64_t j0 = 0; j0 < n; j0 += kBaseTile) {
      job.check();
      const std::int64_t bb = std::min(n, j0 + kBaseTile) - j0;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(bb), int(d), 1.0f,
                  qPacked.data(), int(d), base.packed.data() + j0 * d, int(d), 0.0f, C.data(),
                  int(bb));
      const float* norms = base.norms.data() + j0;
      const std::int32_t* labels = label.data() + j0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
      for (std::int64_t i = 0; i < m; ++i) {
        CandidateRow& row = rows[std::size_t(i)];
        const float* c = C.data() + i * bb;
        switch (metric) {
        case Metric::L2:
          scanRow<Metric::L2>(c, bb, qNorms[std::size_t(i)], norms, labels, j0, own[std::size_t(i)],
                              row);
          break;
        case Metric::InnerProduct:
          scanRow<Metric::InnerProduct>(c, bb, qNorms[std::size_t(i)], norms, labels, j0,
                                        own[std::size_t(i)], row);
          break;
        case Metric::Cosine:
          scanRow<Metric::Cosine>(c, bb, qNorms[std::size_t(i)], norms, labels, j0,
                                  own[std::size_t(i)], row);
          break;
        }
      }
      job.progress((double(i0) + double(m) * double(j0 + bb) / double(n)) / double(nq),
                   "joining components");
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (std::int64_t i = 0; i < m; ++i) {
      if (job.stopRequested())
        continue;
      CandidateRow& row = rows[std::size_t(i)];
      row.prune();
      const float* q = data.row(queries[std::size_t(i0 + i)]);
      Found best;
      auto consider = [&](std::int64_t j) {
        const double dist = exactDistance(q, data.row(j), d, metric);
        if (better(dist, j, best))
          best = {j, dist};
      };
      if (row.overflowed()) { // a loose bound or many near-ties: every outside row directly
        for (std::int64_t j = 0; j < n; ++j)
          if (label[std::size_t(j)] != own[std::size_t(i)])
            consider(j);
      } else {
        for (const auto& c : row.items())
          consider(c.id);
      }
      found[std::size_t(i0 + i)] = best;
      row.items().clear();
    }
    job.check();
  }
  return found;
}

/// The exact nearest member of `members` to row `q` (ties to the smaller row).
Found nearestMember(const MatrixView<float>& data, Metric metric, std::int64_t q,
                    const std::vector<std::int64_t>& members) {
  Found best;
  for (const std::int64_t a : members) {
    const double dist = exactDistance(data.row(q), data.row(a), data.cols, metric);
    if (better(dist, a, best))
      best = {a, dist};
  }
  return best;
}

/// One descent: the component, its current inside row, and the best pair it has reached.
struct Descent {
  std::int32_t component = 0;
  std::int64_t inside = -1;
  CrossPair best;
  bool done = false;
};

/// Start rows for the components `large`: for each, the members nearest to the centroids of
/// its `starts` nearest other components (where its boundary with them is likely to lie).
std::vector<Descent> startDescents(const MatrixView<float>& data, Metric metric,
                                   const std::vector<std::vector<std::int64_t>>& members,
                                   const std::vector<std::int32_t>& large, int starts,
                                   int threads) {
  const std::int64_t d = data.cols;
  const std::size_t count = members.size();
  std::vector<float> centroid(count * std::size_t(d), 0.0f);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t c = 0; c < std::int64_t(count); ++c) {
    std::vector<double> sum(std::size_t(d), 0.0);
    for (const std::int64_t r : members[std::size_t(c)])
      for (std::int64_t j = 0; j < d; ++j)
        sum[std::size_t(j)] += data.row(r)[j];
    const double size = double(std::max<std::size_t>(1, members[std::size_t(c)].size()));
    for (std::int64_t j = 0; j < d; ++j)
      centroid[std::size_t(c) * std::size_t(d) + std::size_t(j)] =
          float(sum[std::size_t(j)] / size);
  }
  std::vector<std::vector<Descent>> perComponent(large.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t l = 0; l < std::int64_t(large.size()); ++l) {
    const std::int32_t c = large[std::size_t(l)];
    const float* own = centroid.data() + std::size_t(c) * std::size_t(d);
    std::vector<std::pair<double, std::int32_t>> others;
    for (std::int32_t o = 0; o < std::int32_t(count); ++o)
      if (o != c && !members[std::size_t(o)].empty())
        others.push_back(
            {exactDistance(own, centroid.data() + std::size_t(o) * std::size_t(d), d, metric), o});
    const std::size_t take = std::min(others.size(), std::size_t(std::max(1, starts)));
    std::partial_sort(others.begin(), others.begin() + std::ptrdiff_t(take), others.end());
    std::vector<Found> nearest(take);
    for (const std::int64_t a : members[std::size_t(c)])
      for (std::size_t t = 0; t < take; ++t) {
        const float* target = centroid.data() + std::size_t(others[t].second) * std::size_t(d);
        const double dist = exactDistance(data.row(a), target, d, metric);
        if (better(dist, a, nearest[t]))
          nearest[t] = {a, dist};
      }
    for (const Found& f : nearest) {
      const bool seen =
          std::any_of(perComponent[std::size_t(l)].begin(), perComponent[std::size_t(l)].end(),
                      [&](const Descent& s) { return s.inside == f.row; });
      if (f.row >= 0 && !seen)
        perComponent[std::size_t(l)].push_back({c, f.row, {}, false});
    }
  }
  std::vector<Descent> all;
  for (auto& list : perComponent)
    all.insert(all.end(), list.begin(), list.end());
  return all;
}

bool closer(const CrossPair& a, const CrossPair& than) {
  return than.inside < 0 || a.distance < than.distance ||
         (a.distance == than.distance &&
          std::pair(a.inside, a.outside) < std::pair(than.inside, than.outside));
}

/// One round of the search (see the header).
std::vector<CrossPair> searchRound(const MatrixView<float>& data, Metric metric,
                                   const BaseSummary& base, const CrossNearestParams& params,
                                   const std::vector<std::int32_t>& label, std::int32_t count,
                                   const std::vector<bool>& wanted, int threads, JobControl& job) {
  NEARSCAPE_EXPECTS(std::int64_t(label.size()) == data.rows && std::int32_t(wanted.size()) == count,
                    "the components' labels do not match the data");
  std::vector<std::vector<std::int64_t>> members(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < data.rows; ++i)
    members[std::size_t(label[std::size_t(i)])].push_back(i);
  std::int64_t askedRows = 0;
  for (std::int32_t c = 0; c < count; ++c)
    if (wanted[std::size_t(c)])
      askedRows += std::int64_t(members[std::size_t(c)].size());
  const bool allExact = double(askedRows) * double(data.rows) <= double(params.exactPairs);
  std::vector<std::int64_t> exactQueries;
  std::vector<std::int32_t> large;
  for (std::int32_t c = 0; c < count; ++c) {
    if (!wanted[std::size_t(c)])
      continue;
    const auto& m = members[std::size_t(c)];
    if (allExact || std::int64_t(m.size()) <= params.smallComponent)
      exactQueries.insert(exactQueries.end(), m.begin(), m.end());
    else
      large.push_back(c);
  }
  // Progress by scans of the data: one per 512 exact queries, one per step for the descents.
  const double exactScans =
      double((std::int64_t(exactQueries.size()) + kQueryTile - 1) / kQueryTile);
  const double descentScans =
      large.empty() ? 0.0
                    : double(params.maxSteps) *
                          std::ceil(double(large.size()) * params.starts / double(kQueryTile));
  const double exactShare = exactScans / std::max(1.0, exactScans + descentScans);

  std::vector<CrossPair> pairs(static_cast<std::size_t>(count));
  {
    JobControl stage = job.sub(0.0, exactShare);
    const std::vector<Found> nearest =
        nearestWithOtherLabel(data, base, metric, exactQueries, label, threads, stage);
    for (std::size_t q = 0; q < exactQueries.size(); ++q) {
      const CrossPair p{exactQueries[q], nearest[q].row, float(nearest[q].dist), true};
      CrossPair& best = pairs[std::size_t(label[std::size_t(p.inside)])];
      if (p.outside >= 0 && closer(p, best))
        best = p;
    }
  }
  if (large.empty())
    return pairs;

  std::vector<Descent> descents =
      startDescents(data, metric, members, large, params.starts, threads);
  for (int step = 0; step < params.maxSteps; ++step) {
    std::vector<std::int64_t> from;
    std::vector<std::size_t> which;
    for (std::size_t s = 0; s < descents.size(); ++s)
      if (!descents[s].done) {
        from.push_back(descents[s].inside);
        which.push_back(s);
      }
    if (from.empty())
      break;
    const double at = exactShare + (1.0 - exactShare) * step / params.maxSteps;
    JobControl stage = job.sub(at, at + (1.0 - exactShare) / params.maxSteps);
    const std::vector<Found> out =
        nearestWithOtherLabel(data, base, metric, from, label, threads, stage);
    // Back into the component: the member nearest to the outside row found.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::int64_t q = 0; q < std::int64_t(from.size()); ++q) {
      if (job.stopRequested())
        continue;
      Descent& s = descents[which[std::size_t(q)]];
      const Found& b = out[std::size_t(q)];
      const Found a = nearestMember(data, metric, b.row, members[std::size_t(s.component)]);
      // d(a, b) ≤ d(s.inside, b): the pair only gets nearer; a == s.inside ends the descent.
      const CrossPair p{a.row, b.row, float(a.dist), false};
      if (closer(p, s.best))
        s.best = p;
      s.done = a.row == s.inside;
      s.inside = a.row;
    }
    job.check();
    // Descents of one component that meet follow one path from there on.
    for (std::size_t s = 0; s < descents.size(); ++s)
      for (std::size_t t = 0; t < s && !descents[s].done; ++t)
        if (descents[t].component == descents[s].component &&
            descents[t].inside == descents[s].inside)
          descents[s].done = true;
  }
  for (const Descent& s : descents) {
    CrossPair& best = pairs[std::size_t(s.component)];
    if (s.best.inside >= 0 && closer(s.best, best))
      best = s.best;
  }
  return pairs;
}

} // namespace

NearestOutside nearestOutside(const MatrixView<float>& data, Metric metric, const Context& context,
                              const CrossNearestParams& params) {
  // The packed data (one copy) and its norms, made at the first round and shared by the rest.
  auto base = std::make_shared<std::unique_ptr<BaseSummary>>();
  return [data, metric, context, params, base](const std::vector<std::int32_t>& label,
                                               std::int32_t count, const std::vector<bool>& wanted,
                                               JobControl& job) {
    const int threads = effectiveThreads(context);
    if (!*base)
      *base = std::make_unique<BaseSummary>(knn::summariseBase(data, metric, threads, true));
    return searchRound(data, metric, **base, params, label, count, wanted, threads, job);
  };
}

} // namespace nearscape

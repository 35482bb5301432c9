#include "nearscape/analysis/DistinctOutliers.h"

#include "nearscape/analysis/NeighbourhoodScores.h"
#include "nearscape/core/Error.h"
#include "nearscape/knn/Knn.h"
#include "util/Hash.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

namespace nearscape {

DistinctRows distinctRows(const MatrixView<float>& data) {
  const std::int64_t n = data.rows, d = data.cols;
  const std::size_t bytes = std::size_t(d) * sizeof(float);
  std::vector<std::uint64_t> hash(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t h = mixBits(std::uint64_t(d));
    for (std::int64_t j = 0; j < d; ++j) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, data.row(i) + j, sizeof bits);
      h = mixBits(h ^ bits);
    }
    hash[std::size_t(i)] = h;
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return std::pair(hash[std::size_t(a)], a) < std::pair(hash[std::size_t(b)], b);
  });
  // Within a run of equal hashes, each row joins the first earlier row with its bytes.
  std::vector<std::int64_t> leader(static_cast<std::size_t>(n));
  for (std::size_t s = 0; s < order.size();) {
    std::size_t e = s;
    while (e < order.size() && hash[std::size_t(order[e])] == hash[std::size_t(order[s])])
      ++e;
    for (std::size_t r = s; r < e; ++r) {
      const std::int64_t row = order[r];
      leader[std::size_t(row)] = row;
      for (std::size_t q = s; q < r; ++q)
        if (leader[std::size_t(order[q])] == order[q] &&
            std::memcmp(data.row(order[q]), data.row(row), bytes) == 0) {
          leader[std::size_t(row)] = order[q];
          break;
        }
    }
    s = e;
  }
  DistinctRows out;
  out.group.resize(static_cast<std::size_t>(n));
  std::vector<std::int64_t> index(static_cast<std::size_t>(n), -1);
  for (std::int64_t i = 0; i < n; ++i) { // leaders are their groups' first rows (ids ascend)
    const std::int64_t l = leader[std::size_t(i)];
    if (index[std::size_t(l)] < 0) {
      index[std::size_t(l)] = std::int64_t(out.first.size());
      out.first.push_back(l);
    }
    out.group[std::size_t(i)] = index[std::size_t(l)];
  }
  return out;
}

OutlierScores distinctLocalOutlierFactor(const MatrixView<float>& data, int k, Metric metric,
                                         const Context& context, JobControl& job,
                                         const KnnResult* graph) {
  NEARSCAPE_EXPECTS(k >= 1, "k must be at least 1");
  const DistinctRows distinct = distinctRows(data);
  job.check();
  OutlierScores out;
  out.distinct = std::int64_t(distinct.first.size());
  if (!distinct.repeats()) {
    if (graph && graph->ids.cols() >= k) {
      out.scores = localOutlierFactor(graph->ids.view(), graph->distances.view(), k);
      out.graph = graph->report;
      return out;
    }
    const KnnResult own = knnGraph(data, k, metric, context, job);
    out.scores = localOutlierFactor(own.ids.view(), own.distances.view(), k);
    out.graph = own.report;
    return out;
  }
  NEARSCAPE_EXPECTS(out.distinct > k, "the data holds " + std::to_string(out.distinct) +
                                          " distinct rows; k = " + std::to_string(k) +
                                          " needs more than k");
  const std::int64_t d = data.cols;
  std::vector<float> rows(static_cast<std::size_t>(out.distinct * d));
  for (std::int64_t g = 0; g < out.distinct; ++g)
    std::copy_n(data.row(distinct.first[std::size_t(g)]), d, rows.begin() + g * d);
  const KnnResult own = knnGraph({rows.data(), out.distinct, d}, k, metric, context, job);
  const std::vector<float> perGroup = localOutlierFactor(own.ids.view(), own.distances.view(), k);
  out.scores.resize(distinct.group.size());
  for (std::size_t i = 0; i < distinct.group.size(); ++i)
    out.scores[i] = perGroup[std::size_t(distinct.group[i])];
  out.graph = own.report;
  return out;
}

} // namespace nearscape

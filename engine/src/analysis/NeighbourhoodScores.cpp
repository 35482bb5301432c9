#include "nearscape/analysis/NeighbourhoodScores.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <string>

namespace nearscape {
namespace {

void checkGraph(const MatrixView<std::int32_t>* ids, const MatrixView<float>* distances, int k) {
  const std::int64_t rows = ids ? ids->rows : distances->rows;
  const std::int64_t cols = ids ? ids->cols : distances->cols;
  NEARSCAPE_EXPECTS(k >= 1, "k must be at least 1");
  NEARSCAPE_EXPECTS(cols >= k, "the graph has " + std::to_string(cols) +
                                   " neighbours per item; k = " + std::to_string(k) +
                                   " needs as many");
  if (ids && distances)
    NEARSCAPE_EXPECTS(distances->rows == rows && distances->cols >= k,
                      "ids and distances differ in shape");
  if (ids)
    for (std::int64_t i = 0; i < rows; ++i)
      for (int c = 0; c < k; ++c) {
        const std::int32_t id = ids->row(i)[c];
        NEARSCAPE_EXPECTS(id >= 0 && id < rows, "item " + std::to_string(i) + " has neighbour " +
                                                    std::to_string(id) + ", not an item");
      }
}

} // namespace

std::vector<float> kthNeighbourDistance(const MatrixView<float>& distances, int k) {
  checkGraph(nullptr, &distances, k);
  std::vector<float> out(static_cast<std::size_t>(distances.rows));
  for (std::int64_t i = 0; i < distances.rows; ++i)
    out[std::size_t(i)] = distances.row(i)[k - 1];
  return out;
}

std::vector<float> localOutlierFactor(const MatrixView<std::int32_t>& ids,
                                      const MatrixView<float>& distances, int k) {
  checkGraph(&ids, &distances, k);
  const std::int64_t n = ids.rows;
  std::vector<double> lrd(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < n; ++p) {
    double reach = 0;
    for (int c = 0; c < k; ++c) {
      const std::int32_t o = ids.row(p)[c];
      reach += std::max(double(distances.row(o)[k - 1]), double(distances.row(p)[c]));
    }
    lrd[std::size_t(p)] = 1.0 / (reach / k + 1e-10);
  }
  std::vector<float> lof(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < n; ++p) {
    double sum = 0;
    for (int c = 0; c < k; ++c)
      sum += lrd[std::size_t(ids.row(p)[c])];
    lof[std::size_t(p)] = float(sum / k / lrd[std::size_t(p)]);
  }
  return lof;
}

std::vector<float> neighbourhoodOverlap(const MatrixView<std::int32_t>& a,
                                        const MatrixView<std::int32_t>& b, int k) {
  checkGraph(&a, nullptr, k);
  checkGraph(&b, nullptr, k);
  NEARSCAPE_EXPECTS(a.rows == b.rows, "the two graphs have " + std::to_string(a.rows) + " and " +
                                          std::to_string(b.rows) + " items; they must be the same");
  std::vector<float> out(static_cast<std::size_t>(a.rows));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::vector<std::int32_t> x(a.row(i), a.row(i) + k), y(b.row(i), b.row(i) + k);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    std::vector<std::int32_t> both;
    std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
    out[std::size_t(i)] = float(both.size()) / float(k);
  }
  return out;
}

std::vector<std::int64_t> topItems(const std::vector<float>& scores, std::int64_t count) {
  std::vector<std::int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::int64_t(0));
  const auto by = [&](std::int64_t a, std::int64_t b) {
    const float x = scores[std::size_t(a)], y = scores[std::size_t(b)];
    if (std::isnan(x) != std::isnan(y))
      return std::isnan(y);
    return x != y && !std::isnan(x) ? x > y : a < b;
  };
  const auto top = std::min<std::int64_t>(std::max<std::int64_t>(count, 0), order.size());
  std::partial_sort(order.begin(), order.begin() + top, order.end(), by);
  order.resize(std::size_t(top));
  return order;
}

} // namespace nearscape

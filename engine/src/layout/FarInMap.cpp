#include "nearscape/layout/FarInMap.h"

#include "nearscape/core/Context.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nearscape {
namespace {

double mapDistance2(const MatrixView<float>& p, std::int64_t a, std::int64_t b) {
  double s = 0;
  for (std::int64_t c = 0; c < p.cols; ++c) {
    const double diff = double(p.row(a)[c]) - double(p.row(b)[c]);
    s += diff * diff;
  }
  return s;
}

} // namespace

std::vector<std::int64_t> mapRanks(const MatrixView<float>& positions, std::int64_t item,
                                   const std::vector<std::int32_t>& others) {
  const std::int64_t n = positions.rows;
  NEARSCAPE_EXPECTS(item >= 0 && item < n, "item " + std::to_string(item) + " is not on the map");
  std::vector<double> radius(others.size());
  for (std::size_t o = 0; o < others.size(); ++o) {
    NEARSCAPE_EXPECTS(others[o] >= 0 && others[o] < n,
                      "item " + std::to_string(others[o]) + " is not on the map");
    radius[o] = mapDistance2(positions, item, others[o]);
  }
  // One pass: a point at distance d is strictly nearer than every radius r > d, i.e. than the
  // sorted radii from upper_bound(d) on; so d < r exactly when upper_bound(d) ≤ lower_bound(r).
  std::vector<double> sorted = radius;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> from(sorted.size() + 1, 0); // points by their upper_bound
  for (std::int64_t j = 0; j < n; ++j)
    if (j != item) {
      const double d = mapDistance2(positions, item, j);
      from[std::size_t(std::upper_bound(sorted.begin(), sorted.end(), d) - sorted.begin())] += 1;
    }
  std::vector<std::int64_t> ranks(others.size());
  for (std::size_t o = 0; o < others.size(); ++o) {
    const auto last =
        std::size_t(std::lower_bound(sorted.begin(), sorted.end(), radius[o]) - sorted.begin());
    std::int64_t nearer = 0;
    for (std::size_t b = 0; b <= last; ++b)
      nearer += from[b];
    ranks[o] = nearer;
  }
  return ranks;
}

std::int64_t farInMapRankLimit(const MatrixView<float>& positions,
                               const std::vector<std::int64_t>& items,
                               const MatrixView<std::int32_t>& neighbours, double flaggedShare,
                               int threads) {
  NEARSCAPE_EXPECTS(!items.empty() && neighbours.rows == std::int64_t(items.size()) &&
                        neighbours.cols >= 1,
                    "the sample's items and neighbour lists differ in number, or are empty");
  NEARSCAPE_EXPECTS(flaggedShare > 0 && flaggedShare < 1,
                    "the flagged share must lie strictly between 0 and 1");
  const std::int64_t k = neighbours.cols;
  std::vector<std::int64_t> pooled(static_cast<std::size_t>(neighbours.rows * k));
  Context context;
  context.threads = threads;
#pragma omp parallel for num_threads(effectiveThreads(context)) schedule(dynamic, 1)
  for (std::int64_t s = 0; s < neighbours.rows; ++s) {
    const std::vector<std::int32_t> others(neighbours.row(s), neighbours.row(s) + k);
    const std::vector<std::int64_t> r = mapRanks(positions, items[std::size_t(s)], others);
    std::copy(r.begin(), r.end(), pooled.begin() + s * k);
  }
  const auto at = std::size_t(std::ceil((1.0 - flaggedShare) * double(pooled.size()))) - 1;
  std::nth_element(pooled.begin(), pooled.begin() + std::ptrdiff_t(at), pooled.end());
  return std::max<std::int64_t>(k - 1, pooled[at]);
}

} // namespace nearscape

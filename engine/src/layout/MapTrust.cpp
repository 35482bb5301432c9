#include "nearscape/layout/MapTrust.h"

#include "nearscape/core/Error.h"
#include "nearscape/core/Sampling.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/layout/GraphLayout.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace nearscape {

MapTrustEstimate estimateMapTrust(const MatrixView<float>& data, const MatrixView<float>& positions,
                                  int k, Metric metric, const Context& context, JobControl& job,
                                  std::int64_t sampleRows, std::uint64_t seed) {
  const std::int64_t n = data.rows;
  NEARSCAPE_EXPECTS(positions.rows == n, "the map has " + std::to_string(positions.rows) +
                                             " items but the data " + std::to_string(n));
  NEARSCAPE_EXPECTS(k >= 1 && k < n, "k must lie in [1, n − 1]");
  NEARSCAPE_EXPECTS(sampleRows >= 2, "map trust's sample needs at least 2 items");
  const std::vector<std::int64_t> rows = seededSample(n, sampleRows, seed);
  const std::int64_t m = std::int64_t(rows.size());
  std::vector<float> queries(std::size_t(m) * std::size_t(data.cols));
  for (std::int64_t r = 0; r < m; ++r)
    std::copy(data.row(rows[std::size_t(r)]), data.row(rows[std::size_t(r)]) + data.cols,
              queries.begin() + r * data.cols);
  // Each sampled item's k + 1 nearest among all items, the item itself then dropped (or the
  // last, where k others tie with it at distance 0 and smaller ids): knnGraph's row, under the
  // same (distance, id) order.
  const KnnResult found =
      knnSearch({queries.data(), m, data.cols}, data, k + 1, metric, context, job);
  const Matrix<std::int32_t> map = mapNeighbours(positions, k, effectiveThreads(context), rows);
  double sum = 0, squares = 0;
  for (std::int64_t r = 0; r < m; ++r) {
    const std::int32_t self = std::int32_t(rows[std::size_t(r)]);
    const std::int32_t* truth = found.ids.row(r);
    int kept = 0, taken = 0;
    for (int a = 0; a <= k && taken < k; ++a) {
      if (truth[a] == self)
        continue;
      ++taken;
      kept += std::find(map.row(r), map.row(r) + k, truth[a]) != map.row(r) + k;
    }
    const double trust = double(kept) / double(k);
    sum += trust;
    squares += trust * trust;
  }
  MapTrustEstimate e;
  e.k = k;
  e.items = n;
  e.sampled = m;
  e.mean = sum / double(m);
  // The sample's variance (n − 1 denominator) and the finite-population correction: sampling
  // without replacement from n items, the mean's variance shrinks by (n − m) / (n − 1).
  const double variance = std::max(0.0, (squares - double(m) * e.mean * e.mean) / double(m - 1));
  const double population = n > 1 ? double(n - m) / double(n - 1) : 0.0;
  e.standardError = std::sqrt(variance / double(m) * population);
  e.low95 = std::max(0.0, e.mean - 1.96 * e.standardError);
  e.high95 = std::min(1.0, e.mean + 1.96 * e.standardError);
  return e;
}

} // namespace nearscape

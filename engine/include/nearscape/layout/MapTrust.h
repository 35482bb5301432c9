#pragma once
/// @file MapTrust.h
/// Map trust's mean estimated from a seeded sample of items: each sampled item's exact k nearest
/// neighbours (original space) against its k nearest on the map, with the estimate's standard
/// error. The full per-item trust (every item, for colouring) is layoutQuality
/// (layout/GraphLayout.h), which needs every item's exact k-NN — an exact graph.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"

#include <cstdint>

namespace nearscape {

/// Items sampled by default: a standard error of the mean under 0.007 whatever the data (an
/// item's trust lies in [0, 1], so its standard deviation is at most 0.5).
inline constexpr std::int64_t kMapTrustSampleRows = 2000;

/// The mean of map trust over all items, estimated from `sampled` of them.
struct MapTrustEstimate {
  double mean = 0;          ///< the sampled items' mean trust
  double standardError = 0; ///< of the mean: sample standard deviation / √sampled, times the
                            ///< finite-population factor √((n − sampled) / (n − 1)); 0 when
                            ///< every item was checked (the mean is then exact)
  double low95 = 0, high95 = 0; ///< mean ∓ 1.96 standard errors, within [0, 1]
  std::int64_t sampled = 0;     ///< items checked exactly
  std::int64_t items = 0;       ///< all items (n)
  int k = 10;                   ///< neighbours compared
};

/// Estimates map trust's mean for the map `positions` (n × 2 or 3) of `data` (n × d, host): a
/// seededSample of `sampleRows` items (all when n ≤ sampleRows), each one's exact k nearest
/// other items by knnSearch under `context` (the GPU where there is one) compared with its k
/// nearest on the map (mapNeighbours). Throws InvalidArgument (shapes, k not in [1, n − 1],
/// sampleRows < 2, NaN/Inf), Cancelled.
MapTrustEstimate estimateMapTrust(const MatrixView<float>& data, const MatrixView<float>& positions,
                                  int k, Metric metric, const Context& context,
                                  JobControl& job = noJobControl(),
                                  std::int64_t sampleRows = kMapTrustSampleRows,
                                  std::uint64_t seed = 0);

} // namespace nearscape

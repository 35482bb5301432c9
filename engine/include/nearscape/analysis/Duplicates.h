#pragma once
/// @file Duplicates.h
/// Near-duplicates over all items: every pair within a distance (an exact range search of every
/// item against every other), each item's exact distance to its nearest other item (for
/// thresholds given as a quantile of them), and the groups the pairs join.
///
/// Distances are the metric's reported ones (Knn.h): Euclidean for L2, 1 − cos, −⟨x, y⟩.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/knn/Knn.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nearscape {

/// Two items (a < b) and their exact distance.
struct NearPair {
  std::int32_t a = 0;
  std::int32_t b = 0;
  double distance = 0; ///< float64, as compared with thresholds
  bool operator==(const NearPair& o) const {
    return a == o.a && b == o.b && distance == o.distance;
  }
};

struct NearPairs {
  std::vector<NearPair> pairs;    ///< sorted by (a, b)
  double threshold = 0;           ///< the distance searched up to
  RunReport report;               ///< where and how ("tile pairs computed" in detail)
  Backend backend = Backend::Cpu; ///< where the search ran (the CPU after a GPU's fallback)
  std::int64_t tilePairs = 0;     ///< tile pairs the GEMM computed
  std::int64_t tilePairsAll = 0;  ///< of all tile pairs (the rest pruned by their boxes)
  std::int64_t candidates = 0;    ///< pairs re-checked in float64
  double seconds = 0;
};

/// How the all-pairs searches cut the work (the results never depend on it).
struct DuplicateParams {
  std::int64_t tileRows =
      512;                   ///< items per tile: smaller tiles prune finer, larger GEMMs run faster
  int boxDims = 16;          ///< principal directions the tiles' boxes span (≤ d)
  std::int64_t maxPairs = 0; ///< refuse thresholds joining more pairs (0: 100 million)
};

/// Every pair of distinct items whose exact (float64) distance is at most `threshold`: no pair is
/// missed and none is added, whatever the rounding of the GEMM that proposes them.
/// `params.maxPairs` guards memory: more pairs than that throw InvalidArgument asking for a
/// smaller threshold. Throws InvalidArgument (empty data, NaN/Inf, a negative L2 or cosine
/// threshold), Cancelled.
NearPairs pairsWithin(const MatrixView<float>& data, double threshold, Metric metric,
                      const Context& context, JobControl& job = noJobControl(),
                      const DuplicateParams& params = {});

/// Pairs for a threshold given as the q-quantile of every item's exact distance to its nearest
/// other item — without computing all of those. Each item's nearest within its own tile bounds
/// its true nearest from above, so the quantile of those bounds (one order statistic further)
/// bounds the wanted quantile; one range search at that `reach` finds, for every item whose
/// nearest lies within it, that nearest exactly — which includes every item the quantile's
/// order statistics rest on.
struct QuantilePairs {
  NearPairs pairs; ///< every pair within `reach` (≥ the threshold); pairs.threshold = the quantile
  double reach = 0;
  /// Per item: the exact distance to its nearest other item where it is ≤ reach, else +∞.
  std::vector<double> nearest;
};
QuantilePairs pairsWithinQuantile(const MatrixView<float>& data, double q, Metric metric,
                                  const Context& context, JobControl& job = noJobControl(),
                                  const DuplicateParams& params = {});

/// The q-quantile of the nearest-other distances of which `nearest` knows the smallest (the
/// rest +∞); nothing when the order statistics it needs are not known.
std::optional<double> knownQuantile(const std::vector<double>& nearest, double q);

/// The q-quantile of `values` (0 ≤ q ≤ 1), linearly interpolated between order statistics
/// (NumPy's default). Throws InvalidArgument (empty, q outside [0, 1]).
double quantile(std::vector<double> values, double q);

/// Groups of near-duplicates: the connected components of the pairs within `threshold`
/// (all of `pairs` when it is larger than every distance).
struct DuplicateGroups {
  std::vector<std::int32_t> groupOf;             ///< per item: its group, −1 when in none
  std::vector<std::vector<std::int32_t>> groups; ///< ≥ 2 items each, ascending; largest first,
                                                 ///< ties by smaller first item
  std::int64_t itemsInGroups() const;
  /// Items a "keep one per group" list drops: every member but each group's first.
  std::int64_t redundantItems() const;
};
DuplicateGroups groupPairs(std::int64_t items, const std::vector<NearPair>& pairs,
                           double threshold);

} // namespace nearscape

namespace nearscape {

struct Dataset;

/// The groups as TSV: a header `group	id` then the metadata columns (or, without metadata, a
/// `label` column when the data has labels, as IDX files do); one row per item of every group,
/// groups in order (0 = the largest). Tabs and line breaks inside values become spaces.
std::string duplicateGroupsTsv(const DuplicateGroups& groups, const Dataset& dataset);

/// "Keep one per group": the ids of every item in no group and of each group's first item,
/// ascending, one per line.
std::string keepOnePerGroup(const DuplicateGroups& groups, std::int64_t items);

} // namespace nearscape

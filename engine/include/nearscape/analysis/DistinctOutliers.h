#pragma once
/// @file DistinctOutliers.h
/// The local outlier factor where rows repeat: k-distinct distances (Breunig, Kriegel, Ng &
/// Sander, 2000, §4, the remark after the local reachability density's definition).

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <cstdint>
#include <vector>

namespace nearscape {

/// Rows grouped by identical coordinates (bit for bit).
struct DistinctRows {
  std::vector<std::int64_t> group; ///< per row: the index of its distinct row (0 … count − 1)
  std::vector<std::int64_t> first; ///< per distinct row: the first row that holds it
  bool repeats() const { return first.size() < group.size(); }
};

/// Groups the rows of `data` (n × d, host memory) by identical coordinates: O(n · d).
DistinctRows distinctRows(const MatrixView<float>& data);

/// Outlier scores and the graph they were read from.
struct OutlierScores {
  std::vector<float> scores; ///< per row
  RunReport graph;           ///< how the kNN graph was found
  std::int64_t distinct = 0; ///< distinct rows the scores were computed over
};

/// The local outlier factor (localOutlierFactor, MinPts = k) with k-distinct distances: a group
/// of more than k identical rows makes every reachability distance among them 0, its density
/// infinite, and its neighbours' LOF 1e9–1e11 (the top list fills with them). As the paper
/// suggests, neighbourhoods count distinct coordinates: the LOF is computed over the distinct
/// rows (each group once, its own k nearest distinct rows as neighbours) and every row of a
/// group gets its group's score. Without repeated rows this is localOutlierFactor on the exact
/// graph; `graph`, when given (exact, n × ≥ k, of `data`), is then used instead of a new one.
/// Throws InvalidArgument (k < 1, k ≥ the distinct rows), Cancelled, and what knnGraph throws.
OutlierScores distinctLocalOutlierFactor(const MatrixView<float>& data, int k, Metric metric,
                                         const Context& context, JobControl& job,
                                         const KnnResult* graph = nullptr);

} // namespace nearscape

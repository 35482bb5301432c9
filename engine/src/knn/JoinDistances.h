#pragma once
// The distances of one NN-Descent local join, four rows by four columns at a time (internal).
//
// A join scores every pair of a node's candidates; pair by pair, each distance streamed both
// vectors from L2 (784 floats: 6 KB a distance) and the kernel waited on those loads (half of
// fashion-mnist's graph time, docs/benchmarks.md, issue 43). A 4 × 4 tile loads each of its
// eight vectors once for sixteen distances, as a GEMM's micro-kernel does.

#include "nearscape/core/Metric.h"

#include <cstdint>
#include <vector>

namespace nearscape::knn {

/// Scores pairs of rows of `x` (host, row-major, `d` columns): squared L2, or −dot for
/// Metric::InnerProduct. A pair's value does not depend on where it lies in a block or on the
/// thread: the same lanes add in the same order, so a seeded NN-Descent stays deterministic.
class JoinDistances {
public:
  JoinDistances(const float* x, std::int64_t d, Metric metric);

  /// Distances from each of `rows` to each of `cols`, row-major in `out` (rows.size() ×
  /// cols.size()); with `upperOnly`, only the entries with column index > row index need be
  /// right (the pairs within one list), and tiles wholly below the diagonal are skipped.
  void block(const std::vector<std::int32_t>& rows, const std::vector<std::int32_t>& cols,
             bool upperOnly, std::vector<float>& out);

private:
  const float* m_x;
  std::int64_t m_d;
  bool m_dot;
  std::vector<std::int32_t> m_rows, m_cols; // padded to whole tiles
};

} // namespace nearscape::knn

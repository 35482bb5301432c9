#pragma once
// An exact-kNN oracle for the tests, written from the definitions alone: plain float64 loops and
// its own tie rule. It calls nothing of the engine (not exactDistance, knnReference or the
// engine's comparators), so a bug there cannot hide by being checked against itself.
//
// Definitions (docs/design.md, Metric.h): L2 → √Σ(a−b)²; inner product → −Σab; cosine → 1 − cos
// with cos = Σab / √(Σa²·Σb²), and 0 for a zero vector. Nearest first; equal distances by the
// smaller id.

#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/knn/Knn.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape::test {

/// The distance between rows a and b (length d) under `metric`, in float64 from the definition.
double oracleDistance(const float* a, const float* b, std::int64_t d, Metric metric);

/// The oracle's answer: for each query row its k + 2 best (distance, id) in order, so that a
/// comparison can see ties just past rank k.
struct OracleKnn {
  std::int64_t rows = 0;
  int k = 0;                     ///< ranks asked for
  int width = 0;                 ///< ranks kept per row (k + 2, at most the candidates a row has)
  std::vector<double> distances; ///< rows × width
  std::vector<std::int32_t> ids; ///< rows × width
  const double* distanceRow(std::int64_t r) const { return distances.data() + r * width; }
  const std::int32_t* idRow(std::int64_t r) const { return ids.data() + r * width; }
};

/// Brute force over every base row for the query rows `rows` (all when empty); with `graph`,
/// query row i (a base row) never lists itself. Runs on all cores.
OracleKnn oracleKnn(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                    Metric metric, bool graph, const std::vector<std::int64_t>& rows = {});

/// How close a reported distance must be to the oracle's: |got − exact| ≤ relative ·
/// max(floor, |exact|). floor 1 suits data of unit scale; floor 0 compares at any scale.
struct Tolerance {
  double relative = 1e-6;
  double floor = 1.0;
  double of(double exact) const;
};

/// "" when `got` (rows `gotRows` of it, all when empty, matching the oracle's rows in order) is the
/// oracle's answer, else the first difference. Every reported distance must be its id's exact
/// distance and the oracle's at that rank; ids must be distinct, in range, never the row itself in
/// a graph, and the oracle's own — except at ranks where the oracle has a near tie (two distances
/// within the tolerance that are not exactly equal), where rounding may order them either way.
/// Exactly equal distances (duplicates, grid points) must come by the smaller id.
std::string compareWithOracle(const KnnResult& got, const OracleKnn& oracle,
                              const MatrixView<float>& queries, const MatrixView<float>& base,
                              Metric metric, bool graph, Tolerance tolerance = {},
                              const std::vector<std::int64_t>& gotRows = {});

/// Recall@k of `found` (rows × ≥ k ids) counted against the oracle: an id is a hit when its exact
/// distance is at most the oracle's k-th plus the tolerance (ties count, as ann-benchmarks does).
double oracleRecall(const MatrixView<std::int32_t>& found, const OracleKnn& oracle,
                    const MatrixView<float>& queries, const MatrixView<float>& base, Metric metric,
                    Tolerance tolerance = {});

} // namespace nearscape::test

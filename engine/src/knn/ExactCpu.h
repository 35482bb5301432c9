#pragma once
// The CPU exact search (internal): tiled BLAS GEMM for candidates, bounded candidate rows, exact
// float64 re-check. Inputs are validated by the caller.

#include "nearscape/knn/Knn.h"

#include "knn/ExactCommon.h"

namespace nearscape::knn {

/// What a search computes of the base before its tiles (its packing, the packed rows' squared
/// norms and their maximum): two passes over the base that a resident index does once.
struct BaseSummary {
  Packing packing;
  std::vector<float> norms;
  double maxNorm2 = 0;
  /// The packed base (n × d), when kept: searches then read it instead of packing each base tile
  /// again (a single query's whole cost was that packing: docs/benchmarks.md, session 10).
  std::vector<float> packed;
};
/// `keepPacked`: keep the packed base too (one more copy of the data).
BaseSummary summariseBase(const MatrixView<float>& base, Metric metric, int threads,
                          bool keepPacked = false);

/// `excludeSelf`: `queries` is `base` and row i may not return itself (the kNN graph).
/// `summary`: the base's, when the caller keeps one (else computed here).
KnnResult exactSearchCpu(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                         const ExactKnnParams& params, const BaseSummary* summary = nullptr);

} // namespace nearscape::knn

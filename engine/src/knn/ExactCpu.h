#pragma once
// The CPU exact search (internal): tiled BLAS GEMM for candidates, bounded candidate rows, exact
// float64 re-check. Inputs are validated by the caller.

#include "nearscape/knn/Knn.h"

namespace nearscape::knn {

/// `excludeSelf`: `queries` is `base` and row i may not return itself (the kNN graph).
KnnResult exactSearchCpu(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                         const ExactKnnParams& params);

} // namespace nearscape::knn

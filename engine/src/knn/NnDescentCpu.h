#pragma once
// NN-Descent on the CPU (internal): bounded heaps of each node's k best, NEW/OLD samples and
// their reverses, local joins in fixed chunks (GNND §4.1–4.2), deterministic for a seed whatever
// the thread count. descendPiece (knn/DescendPiece.h) runs it where the GPU does not.

#include "nearscape/knn/NnDescent.h"

#include <cstdint>

namespace nearscape::knn {

/// Checks a kNN graph's input: n ≥ 2, k in [1, n − 1], n < 2^31, no NaN/Inf.
/// Throws InvalidArgument.
void validateGraphInput(const MatrixView<float>& data, int k);

/// NN-Descent from random neighbours, or (GGM, GNND §5.1) from two graphs: rows [0, split) and
/// [split, n) start from `initial` (global ids) marked OLD, and the first iteration's NEW samples
/// are drawn from the other part, so the joins look across the two graphs. Distances of the
/// result are exact (float64); `report.method()` is NnDescent or GgmMerge. Throws as
/// validateGraphInput, and Cancelled (checked between chunks of nodes).
KnnResult nnDescentCpu(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress, const MatrixView<std::int32_t>* initial,
                       std::int64_t split);

} // namespace nearscape::knn

#pragma once
// Pieces shared by the CPU and CUDA exact searches (internal): the metric's packing of rows for
// GEMM, the rounding-error bounds, and the exact re-check.

#include "knn/GemmBound.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/knn/Knn.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace nearscape::knn {

/// Whether the GPU's exact path scores its float16 tiles in the fused kernel
/// (cuda/FusedTiles.cu): whole rows in shared memory with d / 8 a power of two, and k ≤ 256 (a
/// fused pass's candidate cap, 8 × 4k, stays within the re-check's 8,192). The graph method's
/// `auto` reads it too.
constexpr bool gpuFusedTiles(std::int64_t d, int k) {
  return (d == 32 || d == 64 || d == 128 || d == 256) && k <= 256;
}

/// How rows are transformed before the GEMM, and what approximate distance a dot product of
/// transformed rows gives: L2 centres rows on the base mean (distances are translation-invariant
/// and smaller norms mean smaller rounding errors); cosine normalises; inner product keeps rows.
struct Packing {
  Metric metric = Metric::L2;
  std::int64_t d = 0;
  std::vector<float> mean; ///< L2 only: the base mean, rounded to float (d)

  /// Writes the transformed rows [begin, end) of `m` into `out` ((end − begin) × d) and their
  /// squared norms (after transformation, float64 accumulation) into `norms`.
  void pack(const MatrixView<float>& m, std::int64_t begin, std::int64_t end, float* out,
            float* norms) const;
};

/// The packing for `metric` over `base` (computes the mean for L2).
Packing makePacking(const MatrixView<float>& base, Metric metric, int threads);

/// The bound E on |approx − exact| (in the approximate-distance units: squared L2, −dot, 1 − cos)
/// for a query whose packed norm² is `queryNorm2` against base rows of packed norm² ≤
/// `maxBaseNorm2`. `inputRounding` is the relative rounding of GEMM inputs (0 for float32, 2^-10
/// for TF32).
double errorBound(Metric metric, std::int64_t d, double queryNorm2, double maxBaseNorm2,
                  double inputRounding);

/// Exact re-check of one row: distances of `ids` recomputed in float64, the k best by
/// (distance, id) written to outIds/outDist.
void finishRow(const float* query, const MatrixView<float>& base, Metric metric, int k,
               std::vector<std::int32_t>& ids, std::int32_t* outIds, float* outDist);

/// Direct exact scan of all base rows for one query (the fallback), skipping `skip` (or −1).
void directRow(const float* query, const MatrixView<float>& base, Metric metric, int k,
               std::int64_t skip, std::int32_t* outIds, float* outDist);

/// Direct exact scans of all base rows for the queries `rows` (the fallback), each skipping
/// `skipOf(row)` (or −1); results at outIds/outDist + row · k, as directRow gives them. Fewer rows
/// than threads share out the base (slices of at least 4,096 rows, each read once for every
/// row), so a handful of rows takes the whole CPU, not one core each.
void directRows(const MatrixView<float>& queries, const std::vector<std::int64_t>& rows,
                const MatrixView<float>& base, Metric metric, int k,
                const std::function<std::int64_t(std::int64_t)>& skipOf, std::int32_t* outIds,
                float* outDist, int threads);

} // namespace nearscape::knn

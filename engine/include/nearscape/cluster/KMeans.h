#pragma once
/// @file KMeans.h
/// Seeded k-means (Lloyd's iterations on a sample, as Faiss trains its IVF quantiser, §7 of the
/// Faiss paper): the coarse quantiser of IVF indexes, and a clustering tool of its own.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <vector>

namespace nearscape {

struct KMeansParams {
  int clusters = 0;              ///< k ≤ rows
  int iterations = 10;           ///< Lloyd iterations
  bool plusPlus = false;         ///< k-means++ seeding (else k distinct random rows)
  int maxPointsPerCluster = 256; ///< the training sample holds at most k × this many rows
};

struct KMeansResult {
  Matrix<float> centroids; ///< k × d
  double inertia = 0;      ///< mean squared distance (1 − cos for cosine) to the centroid
  int iterations = 0;
};

/// Clusters `data`. L2 and inner product: Euclidean k-means (Faiss trains its inner-product IVF
/// the same way); cosine: spherical k-means (rows and centroids normalised). An emptied cluster
/// takes a seeded random sample row. Deterministic for context.seed and any thread count (on one
/// backend: the assignments' float32 rounding differs between CPU and GPU).
/// Throws InvalidArgument (k out of range, NaN/Inf), Cancelled (between iterations).
KMeansResult kmeans(const MatrixView<float>& data, const KMeansParams& params, Metric metric,
                    const Context& context, JobControl& job = noJobControl());

/// For each row of `data`, the `count` nearest centroids (by squared L2, or by largest dot product
/// for inner product and cosine; ties to the smaller index), as rows × count ids. Uses BLAS GEMM
/// tiles on the CPU, cuBLAS on CUDA (context's backend); the ranking is float32's (a quantiser,
/// not an exact search), so the backends may differ where scores tie within rounding. The CPU
/// checks `job` for a stop between its tiles. Throws Cancelled.
std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                           const MatrixView<float>& centroids, int count,
                                           Metric metric, const Context& context,
                                           JobControl& job = noJobControl());

} // namespace nearscape

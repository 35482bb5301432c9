#pragma once
// Device helpers shared by the exact-search kernels: one warp handles one row.

#include "nearscape/core/Metric.h"

namespace nearscape::cuda {

/// Exact float64 distance (Knn.h conventions) between q and b, both d long, computed by the 32
/// lanes of a warp; every lane returns the result.
__device__ inline double warpExactDistance(const float* q, const float* b, int d, int metric,
                                           int lane) {
  double s = 0, qq = 0, bb = 0;
  for (int j = lane; j < d; j += 32) {
    const double x = q[j], y = b[j];
    if (metric == int(Metric::L2)) {
      s += (x - y) * (x - y);
    } else {
      s += x * y;
      qq += x * x;
      bb += y * y;
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    s += __shfl_xor_sync(0xffffffffu, s, off);
    qq += __shfl_xor_sync(0xffffffffu, qq, off);
    bb += __shfl_xor_sync(0xffffffffu, bb, off);
  }
  if (metric == int(Metric::L2))
    return sqrt(s);
  if (metric == int(Metric::InnerProduct))
    return -s;
  return (qq == 0 || bb == 0) ? 1.0 : 1.0 - s / sqrt(qq * bb); // as exactDistance
}

/// The 1/‖x‖ factor of cosine's normalisation (1 for other metrics; 0 for a zero vector),
/// computed by a warp over the d values of x.
__device__ inline double warpCosineScale(const float* x, int d, int metric, int lane) {
  if (metric != int(Metric::Cosine))
    return 1.0;
  double s = 0;
  for (int j = lane; j < d; j += 32)
    s += double(x[j]) * x[j];
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_xor_sync(0xffffffffu, s, off);
  return s > 0 ? 1.0 / sqrt(s) : 0.0;
}

/// Element j of a row packed for the GEMM: centred (L2), normalised (cosine) or as is (IP).
__device__ inline float packedValue(const float* x, int j, const float* mean, int metric,
                                    double scale) {
  return metric == int(Metric::L2)       ? x[j] - mean[j]
         : metric == int(Metric::Cosine) ? float(x[j] * scale)
                                         : x[j];
}

/// Sum over a warp; every lane returns it.
__device__ inline double warpSum(double v) {
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

} // namespace nearscape::cuda

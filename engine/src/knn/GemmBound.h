#pragma once
// The norm expansion's approximate distance and the rounding bound that exactness rests on
// (docs/design.md, "Exact"; Faiss §2.1, eq. 2), written once for the CPU (knn/ExactCommon.cpp,
// knn/ExactCpu.cpp) and the GPU (cuda/ExactPass.cu): plain arithmetic that nvcc compiles for
// both sides and g++ for the host.

#include "nearscape/core/Metric.h"

#include <cstddef>

#if defined(__CUDACC__)
#define NEARSCAPE_HOST_DEVICE __host__ __device__
#else
#define NEARSCAPE_HOST_DEVICE
#endif

namespace nearscape::knn {

constexpr double kUnitRoundoff = 1.0 / (1 << 24); ///< float32's u

/// The approximate distance from a dot product of packed rows (squared L2, −dot, 1 − cos).
NEARSCAPE_HOST_DEVICE inline float approxDistance(Metric metric, float queryNorm2, float baseNorm2,
                                                  float dot) {
  return metric == Metric::L2             ? queryNorm2 + baseNorm2 - 2.0f * dot
         : metric == Metric::InnerProduct ? -dot
                                          : 1.0f - dot;
}

/// A candidate's approximate distance lies within perBaseNorm · ‖b‖ + constant of the true one
/// (in the approximate distance's units), ‖b‖ being that candidate's packed base norm.
struct BoundTerms {
  double perBaseNorm;
  double constant;
};

/// The bound's terms for a query of packed norm `queryNorm` against base rows of packed norm
/// ≤ `maxBaseNorm`, when one GEMM dot product is off by at most dotRel · ‖x‖‖y‖.
/// Why: |fl(x·y) − x·y| ≤ γ_d Σ|x_j y_j| ≤ d·u‖x‖‖y‖ in any summation order (dotRel = d·u for
/// float32 inputs; rounded inputs add their own share); centring (L2) and normalising (cosine)
/// perturb each element by ≤ u relative, and the few float operations of the norm expansion add
/// a few u of the squared norms. All of it is doubled for safety: an over-estimate only costs
/// candidates.
NEARSCAPE_HOST_DEVICE inline BoundTerms gemmBoundTerms(Metric metric, double dotRel,
                                                       double queryNorm, double maxBaseNorm) {
  const double u = kUnitRoundoff;
  if (metric == Metric::L2) {
    const double s = (queryNorm + maxBaseNorm) * (queryNorm + maxBaseNorm);
    return {2.0 * 2.0 * dotRel * queryNorm, 2.0 * 8.0 * u * s};
  }
  if (metric == Metric::InnerProduct)
    return {2.0 * (dotRel + 4.0 * u) * queryNorm, 0.0};
  return {0.0, 2.0 * (dotRel + 16.0 * u)};
}

/// How many candidates a row may keep before it is recomputed directly.
NEARSCAPE_HOST_DEVICE constexpr std::size_t candidateCap(int k) {
  return std::size_t(4) * std::size_t(k) > 256 ? std::size_t(4) * std::size_t(k) : 256;
}

} // namespace nearscape::knn

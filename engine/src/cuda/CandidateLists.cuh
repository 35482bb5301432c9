#pragma once
// The exact GEMM path's candidate lists (internal to the exact search): per query row, the
// threshold and rounding-bound coefficients, and the candidates kept within the bound. Written by
// the filter after a cuBLAS tile (ExactPass.cu) or by the fused tile kernel (FusedTiles.cu),
// pruned and re-checked in float64 by ExactPass.cu.

#include <cstdint>

namespace nearscape::cuda {

struct Candidate {
  float lower; // approximate distance minus its rounding bound: the true one is not below it
  std::int32_t id;
};

/// Per query row. A candidate j's approximate distance a_j lies within
/// m_j = coefA·‖b_j‖ + coefB of the true one (its own base norm, not the largest: fashion-
/// mnist's largest centred norm is 1.8× the median), so j is kept while a_j − m_j ≤ threshold,
/// and a threshold is the k-th smallest a_c + m_c of k distinct candidates.
struct RowState {
  float threshold; // candidates whose lower estimate lies above it are dropped
  float coefA;
  float coefB;
  int count;    // candidates held
  int overflow; // 1: too many candidates within their bounds; recomputed another way
};

__device__ inline float candidateMargin(const RowState& st, float baseNorm2) {
  return st.coefA * sqrtf(baseNorm2) + st.coefB;
}

} // namespace nearscape::cuda

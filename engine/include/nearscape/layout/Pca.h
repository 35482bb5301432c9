#pragma once
/// @file Pca.h
/// Principal component projections for the first map.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"

#include <vector>

namespace nearscape {

/// Which symmetric matrix the axes come from; both give the same axes (up to rounding).
enum class PcaForm {
  Auto,       ///< Gram when there are more dimensions than fitted rows, else covariance
  Covariance, ///< d × d: the centred data's covariance
  Gram,       ///< m × m over the m fitted rows, its eigenvectors mapped back to d dimensions
};

struct PcaParams {
  int components = 2;             ///< output dimension (2 or 3 for maps), ≤ d
  std::int64_t maxSampleRows = 0; ///< fit on a seeded sample of at most this many rows; 0 = all
  PcaForm form = PcaForm::Auto;   ///< memory O(min(m, d)²) with Auto
};

struct PcaResult {
  Matrix<float> coordinates;     ///< n × components, centred projections
  std::vector<double> mean;      ///< d
  std::vector<double> axes;      ///< components × d, unit principal axes, row-major
  std::vector<double> variances; ///< components, descending
  double totalVariance = 0;      ///< trace of the covariance
};

/// Projects `data` onto its top principal axes. The covariance (or, with more dimensions than
/// fitted rows, the Gram matrix) comes from a BLAS `syrk` over tiles (float64 accumulation), the
/// axes from a symmetric eigen-solver; each axis's sign is fixed so its largest-magnitude entry
/// is positive (deterministic output). Costs O(m·d·min(m, d)) time and O(n·k + min(m, d)²)
/// memory beyond the data (m: the fitted rows).
/// Throws InvalidArgument (empty data, components out of range, NaN/Inf), Cancelled.
PcaResult computePca(const MatrixView<float>& data, const PcaParams& params, const Context& context,
                     JobControl& job = noJobControl());

} // namespace nearscape

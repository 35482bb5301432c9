#pragma once
/// @file Pca.h
/// Principal component projections for the first map.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"

#include <vector>

namespace nearscape {

struct PcaParams {
  int components = 2;             ///< output dimension (2 or 3 for maps), ≤ d
  std::int64_t maxSampleRows = 0; ///< fit on a seeded sample of at most this many rows; 0 = all
};

struct PcaResult {
  Matrix<float> coordinates;     ///< n × components, centred projections
  std::vector<double> mean;      ///< d
  std::vector<double> axes;      ///< components × d, unit principal axes, row-major
  std::vector<double> variances; ///< components, descending
  double totalVariance = 0;      ///< trace of the covariance
};

/// Projects `data` onto its top principal axes. The covariance comes from a BLAS `syrk` over
/// row tiles (float64 accumulation), the axes from a symmetric eigen-solver; each axis's sign is
/// fixed so its largest-magnitude entry is positive (deterministic output).
/// Throws InvalidArgument (empty data, components out of range, NaN/Inf), Cancelled.
PcaResult computePca(const MatrixView<float>& data, const PcaParams& params, const Context& context,
                     JobControl& job = noJobControl());

} // namespace nearscape

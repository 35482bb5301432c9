#pragma once
/// @file Norms.h
/// Row norms, the first ingredient of the norm-expansion distance (‖x‖² − 2⟨x,y⟩ + ‖y‖²).

#include "nearscape/core/MatrixView.h"

#include <vector>

namespace nearscape {

/// Squared L2 norm of every row of `m` (host memory in and out), float64 accumulation, on
/// `threads` CPU threads: the CPU's twin of rowNormsSquared (nearscape/gpu/Norms.h).
std::vector<float> rowNormsSquaredCpu(const MatrixView<float>& m, int threads);

} // namespace nearscape

#pragma once
/// @file Norms.h
/// Row norms, the first ingredient of the norm-expansion distance (‖x‖² − 2⟨x,y⟩ + ‖y‖²).

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"

#include <vector>

namespace nearscape {

/// Squared L2 norm of every row of `m` (host memory in and out), float64 accumulation.
/// Runs on the backend `context` resolves to. Throws DeviceUnavailable when CUDA is forced and not
/// usable, DeviceOutOfMemory when the device cannot hold the data.
std::vector<float> rowNormsSquared(const MatrixView<float>& m, const Context& context);

/// The CPU reference of rowNormsSquared.
std::vector<float> rowNormsSquaredCpu(const MatrixView<float>& m, int threads);

} // namespace nearscape

#pragma once
/// @file Norms.h
/// Row norms on the backend a context resolves to (the CPU's own are core/Norms.h's
/// rowNormsSquaredCpu).

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"

#include <vector>

namespace nearscape {

/// Squared L2 norm of every row of `m` (host memory in and out), float64 accumulation.
/// Runs on the backend `context` resolves to. Throws DeviceUnavailable when CUDA is forced and not
/// usable, DeviceOutOfMemory when the device cannot hold the data.
std::vector<float> rowNormsSquared(const MatrixView<float>& m, const Context& context);

} // namespace nearscape

#pragma once
// The iteration loop that both NN-Descent backends run (internal): the CPU's (knn/NnDescentCpu.cpp)
// and GNND on the GPU (cuda/Gnnd.cu) differ in how an iteration samples, joins and updates the
// lists (GNND §4.1–4.3), not in when they stop or how they report.

#include "nearscape/core/JobControl.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <functional>
#include <string_view>

namespace nearscape::knn {

/// Runs iterate(0), iterate(1), … — each returns how many list entries it changed — until one
/// changes fewer than params.delta · entries (GNND §4: the lists have converged) or
/// `maxIterations` have run. Before each iteration it checks for a stop; after each it calls
/// `progress` (iteration number, share changed) and reports `name: iteration i` on `job`, from 0
/// to 1 over `maxIterations`. Returns the iterations run. Throws Cancelled, and what iterate
/// throws.
int runNnDescentLoop(int maxIterations, std::int64_t entries, const NnDescentParams& params,
                     JobControl& job, const NnDescentProgress& progress, std::string_view name,
                     const std::function<std::int64_t(int iteration)>& iterate);

} // namespace nearscape::knn

#pragma once
// One node's move on the CPU (internal): layout::moveNode's edges, samples and arithmetic, with
// the negative samples' repulsion sixteen at a time on CPUs with AVX-512.

#include "layout/LayoutStep.h"

namespace nearscape::layout {

/// Moves node i as moveNode does: the same sampled edges and the same negative samples, drawn
/// from the same stream. With AVX-512 the repulsions are summed in sixteen lanes and x^b is a
/// polynomial (relative error below 3e-6) rather than libm's powf: powf and the division were
/// most of an epoch (docs/benchmarks.md, issue 43). Deterministic for a seed on a given CPU
/// whatever the threads; a CPU without AVX-512 runs moveNode itself.
void moveNodeCpu(const EpochStep& s, std::int64_t i);

} // namespace nearscape::layout

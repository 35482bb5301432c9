#pragma once
// Float64 distances of a graph's edges (internal): the exact weights of a kNN graph given by its
// ids alone. Eight lanes of float64 sums (element j in lane j mod 8, each step a fused
// multiply-add), folded as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): the same bits with
// AVX-512, AVX2 or plain C++ (picked at run time), so a CPU's vector width never changes a
// weight. Accurate to float64 rounding like core/Metric.h's exactDistance, whose sums run in
// another order: both round to the same float but for a value within ~1e-16 of a float's
// rounding boundary.

#include "nearscape/core/Metric.h"

#include <cstdint>

namespace nearscape::graph {

/// The distance of rows `a` and `b` (d floats each) in `metric`: √Σ(a − b)² for L2, −Σ a·b for
/// inner product, 1 − a·b / √(|a|²·|b|²) for cosine (1 when either is zero), as exactDistance
/// defines them.
double edgeDistance(const float* a, const float* b, std::int64_t d, Metric metric);

/// edgeDistance of row `a` to each of `count` rows, into out[0, count).
void edgeDistances(const float* a, const float* const* rows, int count, std::int64_t d,
                   Metric metric, double* out);

/// The instruction set edgeDistance uses on this CPU ("avx512", "avx2" or "generic").
const char* edgeDistanceKernel();

} // namespace nearscape::graph

#pragma once
// A row scaled to unit length (internal): cosine works on normalised rows, in the ANN indexes'
// working vectors and in spherical k-means alike.

#include <cstdint>

namespace nearscape {

/// Writes the normalised `row` (d values) into `out`, which may be `row` itself; the norm is
/// summed in float64. A zero row stays zero (cos = 0 with everything, as the exact search says).
void normaliseRow(const float* row, std::int64_t d, float* out);

} // namespace nearscape

#include "util/Normalise.h"

#include <cmath>

namespace nearscape {

void normaliseRow(const float* row, std::int64_t d, float* out) {
  double s = 0;
  for (std::int64_t c = 0; c < d; ++c)
    s += double(row[c]) * row[c];
  const float scale = s > 0 ? float(1.0 / std::sqrt(s)) : 0.0f;
  for (std::int64_t c = 0; c < d; ++c)
    out[c] = row[c] * scale;
}

} // namespace nearscape

#include "FitBox.h"

#include <algorithm>
#include <cmath>

namespace nearscape::ui {

FitBox robustFitBox(const std::vector<float>& positions, int dim) {
  FitBox box;
  const std::int64_t n = dim > 0 ? std::int64_t(positions.size()) / dim : 0;
  if (n == 0)
    return box;
  const std::int64_t stride = std::max<std::int64_t>(1, n / kSample);
  std::vector<float> axis;
  axis.reserve(std::size_t(n / stride + 1));
  for (int c = 0; c < std::min(dim, 3); ++c) {
    axis.clear();
    double lo = INFINITY, hi = -INFINITY;
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = positions[std::size_t(i * dim + c)];
      lo = std::min(lo, double(v));
      hi = std::max(hi, double(v));
      if (i % stride == 0)
        axis.push_back(v);
    }
    auto at = [&axis](double percentile) {
      const auto k = std::ptrdiff_t(std::llround(percentile / 100.0 * double(axis.size() - 1)));
      std::nth_element(axis.begin(), axis.begin() + k, axis.end());
      return double(axis[std::size_t(k)]);
    };
    const double low = at(kLowPercentile), high = at(kHighPercentile);
    const double pad = kPadding * (high - low);
    box.lo[std::size_t(c)] = high > low ? std::max(lo, low - pad) : lo;
    box.hi[std::size_t(c)] = high > low ? std::min(hi, high + pad) : hi;
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (int c = 0; c < std::min(dim, 3); ++c) {
      const double v = positions[std::size_t(i * dim + c)];
      if (v < box.lo[std::size_t(c)] || v > box.hi[std::size_t(c)]) {
        ++box.outside;
        break;
      }
    }
  return box;
}

} // namespace nearscape::ui

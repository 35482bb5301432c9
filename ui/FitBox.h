#pragma once
// The box Fit and Home show (View → Reset View): the central percentiles of the map per axis,
// padded, so that one far point does not squash the cloud into a corner (issue 42).

#include <array>
#include <cstdint>
#include <vector>

namespace nearscape::ui {

struct FitBox {
  std::array<double, 3> lo{}, hi{}; ///< per axis; the third is 0 for a 2D map
  std::int64_t outside = 0;         ///< items outside the box (the view marks them)
};

/// Per axis: from the kLowPercentile-th to the kHighPercentile-th percentile of the n × dim
/// `positions`, widened by kPadding of that span on each side, but never past the data's own
/// extent (a cloud without outliers is shown whole, as before). An axis without spread keeps
/// its extent. Percentiles come from at most kSample items (every (n / kSample)-th); `outside`
/// counts every item. Empty positions: an empty box at 0.
FitBox robustFitBox(const std::vector<float>& positions, int dim);

inline constexpr double kLowPercentile = 1, kHighPercentile = 99, kPadding = 0.25;
inline constexpr std::int64_t kSample = 1000000;

} // namespace nearscape::ui

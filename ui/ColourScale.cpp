#include "ColourScale.h"

#include <algorithm>
#include <cmath>

namespace nearscape::ui {
namespace {

/// Round-number ticks from `low` to `high` (1, 2 or 5 times a power of ten apart).
std::vector<double> roundTicks(double low, double high, int most) {
  std::vector<double> out;
  if (!(high > low)) {
    out.push_back(low);
    return out;
  }
  const double rough = (high - low) / std::max(1, most - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  const double norm = rough / magnitude;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  const double slack = 1e-9 * (high - low);
  for (double k = std::ceil((low - slack) / step); k * step <= high + slack; ++k)
    out.push_back(std::abs(k * step) < slack ? 0.0 : k * step);
  return out;
}

} // namespace

std::string_view colourScaleName(ColourScaleKind kind) {
  switch (kind) {
  case ColourScaleKind::Auto:
    return "auto";
  case ColourScaleKind::Linear:
    return "linear";
  case ColourScaleKind::Log:
    return "log";
  case ColourScaleKind::Quantile:
    return "quantile";
  }
  return "auto";
}

std::optional<ColourScaleKind> parseColourScale(std::string_view name) {
  for (const ColourScaleKind kind : {ColourScaleKind::Auto, ColourScaleKind::Linear,
                                     ColourScaleKind::Log, ColourScaleKind::Quantile})
    if (colourScaleName(kind) == name)
      return kind;
  return std::nullopt;
}

double ColourScale::at(double value) const {
  if (std::isnan(value))
    return NAN;
  switch (kind) {
  case ColourScaleKind::Log: {
    if (value <= low || !(high > low))
      return 0.0; // ≤ 0 included: no logarithm, drawn with the smallest positive value
    return std::clamp(std::log(value / low) / std::log(high / low), 0.0, 1.0);
  }
  case ColourScaleKind::Quantile: {
    if (breaks.size() < 2)
      return 0.0;
    const double steps = double(breaks.size() - 1);
    const auto first = std::lower_bound(breaks.begin(), breaks.end(), value);
    const auto last = std::upper_bound(first, breaks.end(), value);
    const double lo = double(first - breaks.begin()), hi = double(last - breaks.begin());
    if (hi > lo) // equal to one or more breaks: their middle
      return (lo + hi - 1) / 2 / steps;
    if (lo == 0)
      return 0.0;
    if (first == breaks.end())
      return 1.0;
    const double a = *(first - 1), b = *first; // a < value < b
    return (lo - 1 + (value - a) / (b - a)) / steps;
  }
  default:
    if (!(high > low))
      return 0.0;
    return std::clamp((value - low) / (high - low), 0.0, 1.0);
  }
}

std::vector<ColourScale::Tick> ColourScale::ticks(int most) const {
  std::vector<double> values;
  if (kind == ColourScaleKind::Quantile && breaks.size() >= 2) {
    const double steps = double(breaks.size() - 1);
    for (const double q : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      const double v = breaks[std::size_t(std::lround(q * steps))];
      if (values.empty() || v != values.back())
        values.push_back(v);
    }
  } else if (kind == ColourScaleKind::Log && high > low) {
    const int first = int(std::ceil(std::log10(low) - 1e-9));
    const int last = int(std::floor(std::log10(high) + 1e-9));
    const int decades = last - first + 1;
    // Few decades: their 2× and 5× too; many: every k-th power so that about `most` remain.
    const int stride = std::max(1, (decades + most - 1) / std::max(1, most));
    static constexpr double kMultiples[] = {1, 2, 5};
    const int multiples = decades >= 3 ? 1 : 3;
    for (int d = first - 1; d <= last; ++d)
      for (int k = 0; k < multiples; ++k) {
        const double m = kMultiples[k];
        if (m == 1 && (d - first) % stride != 0)
          continue;
        const double v = m * std::pow(10.0, d);
        if (v >= low * (1 - 1e-9) && v <= high * (1 + 1e-9))
          values.push_back(v);
      }
    if (values.size() < 2)
      values = roundTicks(low, high, most);
  } else {
    values = roundTicks(low, high, most);
  }
  std::vector<Tick> out;
  for (const double v : values)
    out.push_back({v, at(v)});
  return out;
}

double skewness(std::span<const double> values) {
  double n = 0, mean = 0;
  for (const double v : values)
    if (std::isfinite(v))
      n += 1, mean += v;
  if (n < 3)
    return 0.0;
  mean /= n;
  double m2 = 0, m3 = 0;
  for (const double v : values)
    if (std::isfinite(v)) {
      const double d = v - mean;
      m2 += d * d, m3 += d * d * d;
    }
  m2 /= n, m3 /= n;
  if (!(m2 > 0) || m2 < 1e-24 * mean * mean)
    return 0.0;
  return m3 / std::pow(m2, 1.5);
}

ColourScaleKind autoColourScale(std::span<const double> values) {
  constexpr double kSkewed = 1.0;
  if (std::abs(skewness(values)) <= kSkewed)
    return ColourScaleKind::Linear;
  std::vector<double> logs;
  logs.reserve(values.size());
  for (const double v : values) {
    if (std::isnan(v))
      continue;
    if (!(v > 0))
      return ColourScaleKind::Quantile; // no logarithm for it
    logs.push_back(std::log(v));
  }
  return std::abs(skewness(logs)) <= kSkewed ? ColourScaleKind::Log : ColourScaleKind::Quantile;
}

ColourScale fitColourScale(std::span<const double> sorted, ColourScaleKind kind) {
  ColourScale s;
  s.kind = kind == ColourScaleKind::Auto ? ColourScaleKind::Linear : kind;
  if (sorted.empty())
    return s;
  s.low = sorted.front();
  s.high = sorted.back();
  if (s.kind == ColourScaleKind::Log) {
    const auto positive = std::upper_bound(sorted.begin(), sorted.end(), 0.0);
    if (positive == sorted.end())
      s.kind = ColourScaleKind::Linear; // nothing to take the logarithm of
    else
      s.low = *positive;
  } else if (s.kind == ColourScaleKind::Quantile) {
    const std::size_t steps = std::min<std::size_t>(kQuantileSteps, sorted.size() - 1);
    s.breaks.resize(steps + 1);
    for (std::size_t j = 0; j <= steps; ++j)
      s.breaks[j] = sorted[steps == 0 ? 0 : j * (sorted.size() - 1) / steps];
  }
  return s;
}

} // namespace nearscape::ui

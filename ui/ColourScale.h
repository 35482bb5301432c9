#pragma once
// How a numeric colouring maps values to the colour map: linear, logarithmic or by quantile,
// chosen by the data's skew when asked for "auto". No Qt: the explorer's colours, its colour bar
// and the unit test share it.

#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace nearscape::ui {

/// The colour scale asked for; Auto is resolved by autoColourScale.
enum class ColourScaleKind { Auto, Linear, Log, Quantile };

/// "auto", "linear", "log", "quantile": the words of the command line and session files.
std::string_view colourScaleName(ColourScaleKind kind);
/// The kind a word names (as colourScaleName writes it); none for another word.
std::optional<ColourScaleKind> parseColourScale(std::string_view name);

/// A resolved scale: value → position in [0, 1] on the colour map.
struct ColourScale {
  ColourScaleKind kind = ColourScaleKind::Linear; ///< never Auto
  double low = 0, high = 0; ///< the values drawn at the two ends (log: low is > 0)
  /// Quantile: kQuantileSteps + 1 values (fewer for fewer items), sorted; value j is at j / steps.
  std::vector<double> breaks;

  /// The position of `value`: clamped to [0, 1]; NaN for NaN. Log: values ≤ 0 have no
  /// logarithm and are drawn at the low end (with the smallest positive value). Quantile: tied
  /// values share one position, their mid-rank among the breaks, so one value repeated by half
  /// the items takes one colour, not half the map.
  double at(double value) const;

  struct Tick {
    double value;
    double position; ///< at(value)
  };
  /// About `most` ticks that a colour bar can label truthfully: round numbers (linear), powers of
  /// ten and their 2× and 5× (log), the quartiles' values (quantile). Each position is at(value).
  std::vector<Tick> ticks(int most = 6) const;
};

/// Quantile breaks kept for a quantile scale (1/256 of the colour map is below a visible step).
constexpr int kQuantileSteps = 256;

/// Fisher–Pearson skewness of the finite values (0 for fewer than three or no spread).
double skewness(std::span<const double> values);

/// The scale "auto" picks for `values` (NaN ignored). Skewed means |skewness| > 1. Unskewed:
/// linear. Skewed, every value > 0 and the logarithms unskewed (|skewness of log| ≤ 1): log —
/// sizes, counts and prices spanning decades. Otherwise skewed: quantile (negative values, or a
/// tail that log does not straighten).
ColourScaleKind autoColourScale(std::span<const double> values);

/// The scale of `kind` (not Auto) over `sorted`, the finite values in ascending order (a range
/// filter passes only the values it keeps, so the colours span the filtered range). Log with no
/// value > 0 falls back to linear (the result's kind says so).
ColourScale fitColourScale(std::span<const double> sorted, ColourScaleKind kind);

} // namespace nearscape::ui

#pragma once
// How the map is coloured: by the labels, by any metadata column (categories get a qualitative
// palette, numbers a colour-blind-safe continuous map), or by a computed column. Also the search's
// dimming of items that do not match.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// Categories beyond this many: the most frequent kMaxCategories − 1 keep their colour, the rest
/// are drawn as one "other" group (a palette of more hues cannot be told apart).
constexpr int kMaxCategories = 20;

struct ColourScheme {
  QString name; ///< what colours the map ("label", a column's name, …)
  bool numeric = false;
  std::vector<std::uint8_t> rgb; ///< n × 3
  // Categorical: one group per item, shown in the legend (which can hide groups); no groups
  // when the data has no labels.
  std::vector<std::int32_t> group; ///< per item, index into groupNames
  std::vector<std::string> groupNames;
  std::vector<qint64> groupCounts;
  std::vector<QColor> groupColors;
  // Numeric: each item's value (NaN: none, drawn grey) and the colour bar's range.
  std::vector<double> values;
  double minimum = 0, maximum = 0;
};

/// The continuous colour map (viridis: perceptually uniform, colour-blind safe) at t ∈ [0, 1].
QColor viridis(double t);
/// Items without a value, and the "other" group.
QColor missingColor();

/// The data's own labels (every item one colour, no groups, when it has none).
ColourScheme labelScheme(const Dataset& data);
/// Metadata column `column`, read as numbers or categories (readColumn). Reads the column
/// whole: the explorer calls it off the GUI thread. Throws Cancelled.
ColourScheme columnScheme(const Dataset& data, int column, JobControl& job = noJobControl());

/// The metadata columns worth colouring by — numbers, and categories that repeat; not
/// identifiers or free text (mostly unique values, whose colours would say nothing) — and which
/// of them are numeric (opacity and size can follow those). "label", and the column the labels
/// came from ("Label", "class", …), are left out ("label" is always offered). Reads every column
/// whole: run when data or metadata is opened, off the GUI thread. Throws Cancelled.
struct ColumnChoices {
  QStringList colourable;
  QStringList numeric;
};
ColumnChoices columnChoices(const Dataset& data, JobControl& job = noJobControl());

/// Each item's size class (0 … 3: four sizes from the smallest value to the largest; 1 for items
/// without a value) from a numeric column's values.
std::vector<std::uint8_t> sizeClasses(const std::vector<double>& values);
/// A computed per-item value (NaN: none), coloured as a numeric column named `name`.
ColourScheme numericScheme(const QString& name, const std::vector<double>& values);

/// `rgb` with each item's opacity following `values` (n; NaN: none): the largest value fully
/// opaque, the smallest (and items without a value) at 15 %, drawn as a blend toward
/// `background`.
std::vector<std::uint8_t> fadedBy(const std::vector<std::uint8_t>& rgb,
                                  const std::vector<double>& values, const QColor& background);

/// `rgb` with every item not in `matches` (sorted ids) faded toward `background`: the matches
/// stay bright, the rest stay visible for context.
std::vector<std::uint8_t> dimmedExcept(const std::vector<std::uint8_t>& rgb,
                                       const std::vector<std::int64_t>& matches,
                                       const QColor& background);

} // namespace nearscape::ui

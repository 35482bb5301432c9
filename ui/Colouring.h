#pragma once
// How the map is coloured: by the labels, by any metadata column (categories get a qualitative
// palette, numbers a colour-blind-safe continuous map), or by a computed column. Also the search's
// dimming of items that do not match.

#include "ColourScale.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace nearscape::ui {

/// Categories up to this many always keep a colour of their own (the palette's first hues).
constexpr int kMaxCategories = 20;
/// Beyond kMaxCategories, a category folds into one grey "other" group only when it is rare —
/// fewer than this share of the items — or lies beyond kMaxGroups by frequency: 50 equal-sized
/// clusters all keep a colour (the palette extends), a long tail of rare values does not crowd
/// the legend. A lone rare category keeps its colour (an "other" of one says nothing more).
constexpr double kRareShare = 0.005;
constexpr int kMaxGroups = 500;

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
  /// Numeric: the finite values sorted (a range filter refits the scale to the values it keeps
  /// without sorting again), the scale "auto" resolves to (decided on every value, once), and
  /// the scale the colours follow now.
  std::shared_ptr<const std::vector<double>> sorted;
  ColourScaleKind autoScale = ColourScaleKind::Linear;
  ColourScale scale;
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

/// Categories coloured: `category` (per item, an index into `names`), `counts` items each, in
/// the order the legend lists them; the rare ones past the first hues fold into "other".
ColourScheme categoryScheme(const QString& name, const std::vector<std::int32_t>& category,
                            const std::vector<std::string>& names,
                            const std::vector<std::int64_t>& counts);

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
/// A computed per-item value (NaN: none), coloured as a numeric column named `name` on the scale
/// `asked` (Auto: autoColourScale's choice).
ColourScheme numericScheme(const QString& name, const std::vector<double>& values,
                           ColourScaleKind asked = ColourScaleKind::Auto);
/// Paints a numeric scheme's colours again on the scale `asked`, fitted to the values within
/// `range` when one is given (a range filter: the colours span what is shown).
void paintNumeric(ColourScheme& scheme, ColourScaleKind asked,
                  std::optional<std::pair<double, double>> range = std::nullopt);

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

/// `rgb` with every item whose `keep` is 0 faded toward `background` (a facet filter: what it
/// leaves out stays visible, dim, for context). An empty `keep` keeps every item.
std::vector<std::uint8_t> dimmedWhere(const std::vector<std::uint8_t>& rgb,
                                      const std::vector<std::uint8_t>& keep,
                                      const QColor& background);

} // namespace nearscape::ui

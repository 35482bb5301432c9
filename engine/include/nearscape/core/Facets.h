#pragma once
/// @file Facets.h
/// Facets of a data set's metadata (Embedding Atlas's cross-filtering): each column as a
/// histogram (numbers) or a list of its values by count (categories), counted for the whole data,
/// for the items that pass the brushes on the other facets, and for a selection among those.
/// Brushes (a numeric range, a set of values) combine with AND. What the explorer's Facets dock
/// draws and `nearscape-cli facets` prints.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nearscape {

/// One column read for faceting.
struct FacetColumn {
  std::string name;
  bool numeric = false;
  std::vector<double> values;          ///< numeric: per item, NaN where empty
  double minimum = 0, maximum = 0;     ///< numeric: the finite values' range
  std::vector<std::string> categories; ///< categorical: most frequent first (ties by name)
  std::vector<std::int32_t> category;  ///< categorical: per item, an index into categories
};

/// Categories at most for a column to be a facet: more are identifiers or free text.
constexpr std::int64_t kMaxFacetCategories = 1000;

/// The data's facets: its labels ("label", when they came from no metadata column) and every
/// metadata column that reads as numbers or has at most half as many distinct values as items
/// (at least 20, at most kMaxFacetCategories): not identifiers or free text.
/// Reads each column whole (off the GUI thread in the explorer). Throws Cancelled.
std::vector<FacetColumn> readFacetColumns(const Dataset& data, JobControl& job = noJobControl());

/// A brush on one facet: a closed numeric range, or a set of values (any of them passes).
struct FacetBrush {
  std::string column;
  std::optional<std::pair<double, double>> range;
  std::vector<std::string> values;
  bool operator==(const FacetBrush&) const = default;
};

/// Reads "COLUMN=VALUE", "COLUMN=A|B" (any of the values) or "COLUMN=FROM..TO" (a numeric range,
/// FROM ≤ TO; either end may be left out: "size=..100"). The column is the text before the first
/// '='. Throws InvalidArgument naming the text and the form expected.
FacetBrush parseFacetBrush(std::string_view text);
/// The brush written back in parseFacetBrush's form.
std::string facetBrushText(const FacetBrush& brush);

/// Which items pass the brushes, per item: the number of brushes failed (0: passes all) and the
/// index of one failed (the last), so that each facet can count the items passing every brush
/// but its own in one pass. Throws InvalidArgument (a brush names no facet column, or a range
/// on a categorical column), naming the columns there are.
struct FacetPass {
  std::vector<std::uint8_t> failed;     ///< per item, brushes failed (saturating at 255)
  std::vector<std::int32_t> lastFailed; ///< per item, a column index (into the columns) failed
  /// Whether item `i` passes every brush but those on column `except` (-1: every brush).
  bool passes(std::size_t i, int except = -1) const {
    return failed[i] == 0 || (failed[i] == 1 && lastFailed[i] == except);
  }
};
FacetPass facetPass(std::span<const FacetColumn> columns, std::span<const FacetBrush> brushes);

/// One facet's counts. Numeric: `bins` equal-width bins (logarithmic when every value is > 0 and
/// they span more than two decades, as sizes and counts do) with their edges; categorical: the
/// `top` most frequent values, then one "other" bar when more remain. `total`: every item;
/// `filtered`: items passing the other facets' brushes; `selected`: the selection among those.
/// Items without a value are counted apart (`missing…`).
struct FacetCounts {
  std::string column;
  bool numeric = false;
  bool logBins = false;
  std::vector<double> edges;         ///< numeric: bins + 1 edges, ascending
  std::vector<std::string> labels;   ///< categorical: the values shown (the last may be "other")
  bool hasOther = false;             ///< categorical: the last label stands for the rest
  std::vector<std::int32_t> labelOf; ///< categorical: per category of the column, its label
  std::vector<std::int64_t> total, filtered, selected;
  std::int64_t missingTotal = 0, missingFiltered = 0, missingSelected = 0;
  /// The bin (numeric) or label index (categorical) an item of `column` falls in; -1: none.
  int binOf(const FacetColumn& column, std::size_t item) const;
};

/// Counts facet `index` of `columns` with `pass` (facetPass) and `selection` (sorted ids;
/// empty: none). Throws InvalidArgument (index out of range).
FacetCounts countFacet(std::span<const FacetColumn> columns, int index, const FacetPass& pass,
                       std::span<const std::int64_t> selection, int bins = 20, int top = 12);

} // namespace nearscape

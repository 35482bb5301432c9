#pragma once
/// @file ItemSearch.h
/// Finding items by their id or their metadata text, and reading a metadata column as numbers
/// or categories — what the explorer's search field and "colour by" use, and `nearscape-cli find`.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape {

/// How a search text is matched.
enum class MatchMode {
  Substring, ///< case-insensitive (ASCII letters) substring of any text column, or the exact id
  /// an RE2 regular expression (Perl-like, without backreferences or lookaround) searched in
  /// any text column, case-insensitive; matched in time linear in each value's length
  Regex,
};

/// Items, in id order, whose id is `text` or whose metadata value in any column (labels
/// included) matches `text`. An empty text matches nothing. Checks `job` before every item (a
/// new search in the explorer stops the last one; Ctrl-C and Cancel stop it at once) and reports
/// progress every few thousand. Throws InvalidArgument (a malformed regular expression, or one
/// too large to compile, with RE2's reason), Cancelled.
std::vector<std::int64_t> findItems(const Dataset& data, const std::string& text, MatchMode mode,
                                    JobControl& job = noJobControl());

/// A metadata column read for colouring: numbers where every non-empty value parses as a finite
/// number (and at least one does), else categories.
struct ColumnValues {
  bool numeric = false;
  std::vector<double> numbers;         ///< numeric: one per item, NaN where empty
  double minimum = 0, maximum = 0;     ///< numeric: the range of the finite values
  std::vector<std::string> categories; ///< categorical: most frequent first (ties by name)
  std::vector<std::int64_t> counts;    ///< categorical: items per category
  std::vector<std::int32_t> category;  ///< categorical: one per item, index into categories
};

/// Column `column` of `data.metadata` read as numbers or categories. Throws InvalidArgument
/// (no such column), Cancelled.
ColumnValues readColumn(const Dataset& data, int column, JobControl& job = noJobControl());

/// How a metadata column reads, at less cost than readColumn: numbers or not (as readColumn
/// decides), and for categories how many distinct values, counted up to `distinctLimit`
/// (beyond it, distinctLimit + 1): a column of a million distinct texts stops early.
struct ColumnSummary {
  bool numeric = false;
  std::int64_t distinct = 0; ///< categorical: distinct values, at most distinctLimit + 1
};
/// Throws InvalidArgument (no such column), Cancelled.
ColumnSummary summarizeColumn(const Dataset& data, int column, std::int64_t distinctLimit,
                              JobControl& job = noJobControl());

} // namespace nearscape

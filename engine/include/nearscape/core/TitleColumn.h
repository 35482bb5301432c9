#pragma once
/// @file TitleColumn.h
/// Which metadata column names an item (a package, a title, a file name), as the explorer's
/// hover, neighbour list and path strip and the CLI's `find` show it beside `#id`.

#include "nearscape/core/Dataset.h"

#include <string_view>

namespace nearscape {

/// Why a column is the title.
enum class TitleReason {
  None,   ///< no column: items go by `#id`
  Named,  ///< its name says so (kTitleNames)
  Unique, ///< a string column of short, mostly unique values
  Chosen, ///< the person chose it (`--title-column`, a menu)
};

/// The words a TitleReason is printed as ("none", "named", "unique", "chosen").
std::string_view titleReasonName(TitleReason reason);

struct TitleChoice {
  int column = -1; ///< metadata column, or -1
  TitleReason reason = TitleReason::None;
};

/// Column names that make a title, most telling first (case-insensitive).
inline constexpr std::string_view kTitleNames[] = {"title", "name",     "package", "id",
                                                   "key",   "filename", "word",    "term"};

/// The rule (decided in issue 42): first a column named as in kTitleNames, in that order,
/// whose values are at least half distinct; else the column of string values (fewer than
/// half of them numbers) that is at least 90% distinct with a median length of at most 64
/// bytes, the most distinct first, the leftmost on a tie — skipping the label column ("label"
/// or "class"), the text column (a description is no title) and the image column (the
/// thumbnail shows it); else none. Distinctness and lengths are measured on the first 20,000
/// rows, so the choice costs the same at any n. Throws nothing.
TitleChoice pickTitleColumn(const Dataset& dataset);

/// The title of `item` from `column` of the metadata ("" for -1 or an item out of range).
std::string titleOf(const Dataset& dataset, int column, std::int64_t item);

} // namespace nearscape

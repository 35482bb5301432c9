// Which metadata column cluster labels read, and why a named one cannot serve.
#include "nearscape/analysis/ClusterLabels.h"

#include "analysis/LabelWords.h"
#include "nearscape/core/Error.h"
#include "nearscape/io/DatasetReader.h"

#include <charconv>

namespace nearscape {
namespace {

bool isNumber(const std::string& cell) {
  double value = 0;
  const char* end = cell.data() + cell.size();
  const auto [at, error] = std::from_chars(cell.data(), end, value);
  return error == std::errc() && at == end;
}

enum class ColumnKind { Empty, Numbers, Text };

ColumnKind kindOf(const std::vector<std::string>& cells) {
  bool any = false;
  for (const std::string& cell : cells) {
    if (cell.empty())
      continue;
    any = true;
    if (!isNumber(cell))
      return ColumnKind::Text;
  }
  return any ? ColumnKind::Numbers : ColumnKind::Empty;
}

/// Mean kept words per cell, over a sample of at most 2,000 evenly spaced cells.
double meanWords(const std::vector<std::string>& cells) {
  if (cells.empty())
    return 0;
  const std::size_t step = std::max<std::size_t>(1, cells.size() / 2000);
  double words = 0;
  std::size_t counted = 0;
  for (std::size_t i = 0; i < cells.size(); i += step, ++counted)
    words += double(analysis::distinctWords(cells[i], 3).size());
  return words / double(counted);
}

} // namespace

std::vector<std::string> labelTexts(const Dataset& data, const std::string& name) {
  const int c = data.metadata.findColumn(name);
  if (c < 0) {
    std::string names;
    for (const std::string& n : data.metadata.columnNames)
      names += (names.empty() ? "" : ", ") + printableText(n, 80);
    throw InvalidArgument(
        "no metadata column named \"" + printableText(name, 80) + "\"" +
        (names.empty() ? " (the data has no metadata)" : " (the columns are " + names + ")"));
  }
  const std::vector<std::string>& cells = data.metadata.columns[std::size_t(c)];
  switch (kindOf(cells)) {
  case ColumnKind::Empty:
    throw InvalidArgument("metadata column \"" + printableText(name, 80) +
                          "\" is empty: cluster labels need words");
  case ColumnKind::Numbers:
    throw InvalidArgument("metadata column \"" + printableText(name, 80) +
                          "\" holds numbers: cluster labels need a column of text");
  case ColumnKind::Text:
    break;
  }
  return cells;
}

int defaultLabelColumn(const Dataset& data) {
  const auto& columns = data.metadata.columns;
  if (data.textColumn >= 0 && std::size_t(data.textColumn) < columns.size() &&
      kindOf(columns[std::size_t(data.textColumn)]) == ColumnKind::Text)
    return data.textColumn;
  int best = -1;
  double bestWords = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (int(c) == data.imageColumn || kindOf(columns[c]) != ColumnKind::Text)
      continue;
    const double words = meanWords(columns[c]);
    if (words > bestWords) {
      best = int(c);
      bestWords = words;
    }
  }
  return best;
}

} // namespace nearscape

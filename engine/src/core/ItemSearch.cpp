#include "nearscape/core/ItemSearch.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <regex>

namespace nearscape {
namespace {

char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), lowerAscii);
  return text;
}

/// The item id `text` names, or −1 (only plain decimal digits are an id).
std::int64_t idNamed(const std::string& text, std::int64_t n) {
  std::int64_t id = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 0 || id >= n)
    return -1;
  return id;
}

/// A value as a finite number, or nothing. Leading and trailing blanks are allowed.
bool parseNumber(const std::string& text, double& out) {
  std::size_t a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t");
  if (a == std::string::npos)
    return false;
  const char* first = text.data() + a;
  const char* last = text.data() + b + 1;
  if (*first == '+')
    ++first;
  const auto [end, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && end == last && std::isfinite(out);
}

} // namespace

std::vector<std::int64_t> findItems(const Dataset& data, const std::string& text, MatchMode mode) {
  std::vector<std::int64_t> found;
  if (text.empty())
    return found;
  const std::int64_t n = data.size();
  std::vector<const std::vector<std::string>*> columns;
  for (const auto& column : data.metadata.columns)
    columns.push_back(&column);
  auto labelText = [&](std::int64_t item) { return data.labelOf(item); };
  std::function<bool(const std::string&)> matches;
  std::regex pattern;
  // Outlives `matches`, which refers to it (declared inside the branch, it was read after its
  // end: AddressSanitizer's stack-use-after-scope, tests/fuzz/regressions/metadata_tsv/).
  std::string needle;
  if (mode == MatchMode::Regex) {
    try {
      pattern = std::regex(text, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      throw InvalidArgument("'" + text + "' is not a regular expression: " + e.what());
    }
    matches = [&](const std::string& value) { return std::regex_search(value, pattern); };
  } else {
    needle = lowered(text);
    matches = [&](const std::string& value) {
      return std::search(value.begin(), value.end(), needle.begin(), needle.end(),
                         [](char a, char b) { return lowerAscii(a) == b; }) != value.end();
    };
  }
  const std::int64_t id = mode == MatchMode::Substring ? idNamed(text, n) : -1;
  for (std::int64_t item = 0; item < n; ++item) {
    bool hit = item == id || matches(labelText(item));
    for (std::size_t c = 0; !hit && c < columns.size(); ++c)
      hit = matches((*columns[c])[std::size_t(item)]);
    if (hit)
      found.push_back(item);
  }
  return found;
}

ColumnValues readColumn(const Dataset& data, int column) {
  if (column < 0 || column >= int(data.metadata.columns.size()))
    throw InvalidArgument("no metadata column " + std::to_string(column));
  const std::vector<std::string>& values = data.metadata.columns[std::size_t(column)];
  ColumnValues out;
  out.numbers.assign(values.size(), std::nan(""));
  bool allNumbers = true, any = false;
  for (std::size_t i = 0; i < values.size() && allNumbers; ++i) {
    if (values[i].find_first_not_of(" \t") == std::string::npos)
      continue; // empty: no value
    allNumbers = parseNumber(values[i], out.numbers[i]);
    any = any || allNumbers;
  }
  if (allNumbers && any) {
    out.numeric = true;
    out.minimum = INFINITY, out.maximum = -INFINITY;
    for (double v : out.numbers)
      if (std::isfinite(v))
        out.minimum = std::min(out.minimum, v), out.maximum = std::max(out.maximum, v);
    return out;
  }
  out.numbers.clear();
  std::map<std::string, std::int64_t> tally;
  for (const std::string& v : values)
    ++tally[v];
  std::vector<std::pair<std::string, std::int64_t>> ranked(tally.begin(), tally.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return naturalLess(a.first, b.first); });
  std::stable_sort(ranked.begin(), ranked.end(), // most frequent first, ties in natural order
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::map<std::string, std::int32_t> index;
  for (const auto& [name, count] : ranked) {
    index[name] = std::int32_t(out.categories.size());
    out.categories.push_back(name);
    out.counts.push_back(count);
  }
  out.category.reserve(values.size());
  for (const std::string& v : values)
    out.category.push_back(index[v]);
  return out;
}

} // namespace nearscape

#include "nearscape/core/ItemSearch.h"

#include "nearscape/core/Error.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

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

/// `text` compiled for a case-insensitive search, or InvalidArgument with RE2's reason. RE2
/// matches in time linear in the text and never recurses on it (std::regex overflowed the stack
/// on a 50,000-character value and backtracked without end on patterns such as (a+)+$); its
/// memory for one pattern is bounded (a larger pattern is refused).
std::unique_ptr<RE2> compiledPattern(const std::string& text) {
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false); // the reason goes into the error, not to stderr
  auto pattern = std::make_unique<RE2>(text, options);
  if (!pattern->ok())
    throw InvalidArgument("'" + text + "' is not a regular expression: " + pattern->error());
  return pattern;
}

} // namespace

std::vector<std::int64_t> findItems(const Dataset& data, const std::string& text, MatchMode mode,
                                    JobControl& job) {
  std::vector<std::int64_t> found;
  job.check(); // a search stopped before it began (typing on) ends here
  if (text.empty())
    return found;
  const std::int64_t n = data.size();
  std::unique_ptr<RE2> pattern;
  std::string needle;
  if (mode == MatchMode::Regex) {
    pattern = compiledPattern(text);
  } else {
    needle = lowered(text);
  }
  auto matches = [&](const std::string& value) {
    if (pattern) // RE2's DFA: linear in the value's length, whatever the pattern
      return RE2::PartialMatch(value, *pattern);
    return std::search(value.begin(), value.end(), needle.begin(), needle.end(),
                       [](char a, char b) { return lowerAscii(a) == b; }) != value.end();
  };
  const std::int64_t id = mode == MatchMode::Substring ? idNamed(text, n) : -1;
  // A stop is looked for before every item (an atomic load: a long cell or a costly pattern
  // still stops at once); the clock, for progress, is read every few thousand.
  constexpr std::int64_t kChunk = 4096;
  for (std::int64_t item = 0; item < n; ++item) {
    job.check();
    if (item % kChunk == 0 && item > 0)
      job.progress(double(item) / double(n), "searching");
    bool hit = item == id || matches(data.labelOf(item));
    for (std::size_t c = 0; !hit && c < data.metadata.columns.size(); ++c)
      hit = matches(data.metadata.columns[c][std::size_t(item)]);
    if (hit)
      found.push_back(item);
  }
  return found;
}

ColumnValues readColumn(const Dataset& data, int column, JobControl& job) {
  if (column < 0 || column >= int(data.metadata.columns.size()))
    throw InvalidArgument("no metadata column " + std::to_string(column));
  const std::vector<std::string>& values = data.metadata.columns[std::size_t(column)];
  ColumnValues out;
  out.numbers.assign(values.size(), std::nan(""));
  bool allNumbers = true, any = false;
  constexpr std::size_t kChunk = 16384;
  for (std::size_t i = 0; i < values.size() && allNumbers; ++i) {
    if (i % kChunk == 0)
      job.check();
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
  // Hashed (a column of a million distinct texts is counted in a fraction of a second), each
  // distinct value's first item remembered; then ranked.
  struct Tally {
    std::int64_t count = 0;
    std::int32_t category = 0;
  };
  std::unordered_map<std::string_view, Tally> tally;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i % kChunk == 0)
      job.check();
    ++tally[values[i]].count;
  }
  std::vector<std::pair<std::string_view, std::int64_t>> ranked;
  ranked.reserve(tally.size());
  for (const auto& [name, t] : tally)
    ranked.emplace_back(name, t.count);
  job.check();
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    // most frequent first, ties in natural order
    return a.second != b.second ? a.second > b.second : naturalLess(a.first, b.first);
  });
  job.check();
  out.categories.reserve(ranked.size());
  out.counts.reserve(ranked.size());
  for (const auto& [name, count] : ranked) {
    tally[name].category = std::int32_t(out.categories.size());
    out.categories.emplace_back(name);
    out.counts.push_back(count);
  }
  out.category.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i % kChunk == 0)
      job.check();
    out.category.push_back(tally.find(values[i])->second.category);
  }
  return out;
}

ColumnSummary summarizeColumn(const Dataset& data, int column, std::int64_t distinctLimit,
                              JobControl& job) {
  if (column < 0 || column >= int(data.metadata.columns.size()))
    throw InvalidArgument("no metadata column " + std::to_string(column));
  const std::vector<std::string>& values = data.metadata.columns[std::size_t(column)];
  constexpr std::size_t kChunk = 16384;
  ColumnSummary out;
  bool allNumbers = true, any = false;
  for (std::size_t i = 0; i < values.size() && allNumbers; ++i) {
    if (i % kChunk == 0)
      job.check();
    if (values[i].find_first_not_of(" \t") == std::string::npos)
      continue;
    double scratch = 0;
    allNumbers = parseNumber(values[i], scratch);
    any = any || allNumbers;
  }
  out.numeric = allNumbers && any;
  if (out.numeric)
    return out;
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < values.size() && std::int64_t(seen.size()) <= distinctLimit; ++i) {
    if (i % kChunk == 0)
      job.check();
    seen.insert(values[i]);
  }
  out.distinct = std::int64_t(seen.size());
  return out;
}

} // namespace nearscape

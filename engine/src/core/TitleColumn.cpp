#include "nearscape/core/TitleColumn.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_set>
#include <vector>

namespace nearscape {
namespace {

constexpr std::size_t kSampleRows = 20000;
constexpr double kNamedDistinct = 0.5, kUniqueDistinct = 0.9;
constexpr std::size_t kMaxMedianLength = 64;

struct ColumnShape {
  double distinct = 0; ///< share of distinct values among the sampled rows
  double numbers = 0;  ///< share of values that parse as numbers
  std::size_t medianLength = 0;
};

bool isNumber(const std::string& s) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

ColumnShape shapeOf(const std::vector<std::string>& values) {
  const std::size_t rows = std::min(values.size(), kSampleRows);
  ColumnShape shape;
  if (rows == 0)
    return shape;
  std::unordered_set<std::string_view> seen;
  std::vector<std::size_t> lengths;
  std::size_t numbers = 0;
  seen.reserve(rows);
  lengths.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    seen.insert(values[i]);
    lengths.push_back(values[i].size());
    numbers += isNumber(values[i]);
  }
  std::nth_element(lengths.begin(), lengths.begin() + std::ptrdiff_t(rows / 2), lengths.end());
  shape.distinct = double(seen.size()) / double(rows);
  shape.numbers = double(numbers) / double(rows);
  shape.medianLength = lengths[rows / 2];
  return shape;
}

} // namespace

std::string_view titleReasonName(TitleReason reason) {
  switch (reason) {
  case TitleReason::Named:
    return "named";
  case TitleReason::Unique:
    return "unique";
  case TitleReason::Chosen:
    return "chosen";
  case TitleReason::None:
    break;
  }
  return "none";
}

TitleChoice pickTitleColumn(const Dataset& dataset) {
  const Metadata& metadata = dataset.metadata;
  if (metadata.empty())
    return {};
  for (const std::string_view name : kTitleNames) {
    const int c = metadata.findColumn(name);
    if (c >= 0 && shapeOf(metadata.columns[std::size_t(c)]).distinct >= kNamedDistinct)
      return {c, TitleReason::Named};
  }
  int label = metadata.findColumn("label");
  if (label < 0)
    label = metadata.findColumn("class");
  TitleChoice best;
  double bestDistinct = 0;
  for (int c = 0; c < int(metadata.columns.size()); ++c) {
    if (c == label || c == dataset.textColumn || c == dataset.imageColumn)
      continue;
    const ColumnShape shape = shapeOf(metadata.columns[std::size_t(c)]);
    if (shape.numbers < 0.5 && shape.distinct >= kUniqueDistinct &&
        shape.medianLength <= kMaxMedianLength && shape.distinct > bestDistinct) {
      best = {c, TitleReason::Unique};
      bestDistinct = shape.distinct;
    }
  }
  return best;
}

std::string titleOf(const Dataset& dataset, int column, std::int64_t item) {
  if (column < 0 || column >= int(dataset.metadata.columns.size()) || item < 0 ||
      item >= dataset.metadata.rows())
    return {};
  return dataset.metadata.columns[std::size_t(column)][std::size_t(item)];
}

} // namespace nearscape

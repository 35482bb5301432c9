#include "nearscape/core/Facets.h"

#include "nearscape/core/Error.h"
#include "nearscape/core/ItemSearch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace nearscape {
namespace {

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

/// A whole number text as a double; none for anything else (trailing text, empty).
std::optional<double> number(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

std::string columnList(std::span<const FacetColumn> columns) {
  std::string out;
  for (const FacetColumn& c : columns)
    out += (out.empty() ? "" : ", ") + c.name;
  return out.empty() ? std::string("none") : out;
}

/// Whether the labels were read from one of the metadata columns ("label (class)").
bool labelsFromMetadata(const Dataset& data) {
  for (const std::string& name : data.metadata.columnNames)
    if (data.labelSource.size() >= name.size() + 3 &&
        data.labelSource.compare(data.labelSource.size() - name.size() - 3, std::string::npos,
                                 " (" + name + ")") == 0)
      return true;
  return data.metadata.findColumn("label") >= 0;
}

} // namespace

std::vector<FacetColumn> readFacetColumns(const Dataset& data, JobControl& job) {
  std::vector<FacetColumn> out;
  // Identifiers and free text (mostly unique values): a bar per value says nothing.
  const std::int64_t limit = std::clamp<std::int64_t>(data.size() / 2, 20, kMaxFacetCategories);
  if (data.hasLabels() && !labelsFromMetadata(data) &&
      std::int64_t(data.labelNames.size()) <= limit) {
    FacetColumn f;
    f.name = "label";
    f.categories = data.labelNames;
    f.category = data.labels;
    out.push_back(std::move(f));
  }
  const std::size_t columns = data.metadata.columnNames.size();
  for (std::size_t c = 0; c < columns; ++c) {
    JobControl stage = job.sub(double(c) / double(columns), double(c + 1) / double(columns));
    const ColumnSummary summary = summarizeColumn(data, int(c), limit, stage);
    if (!summary.numeric && summary.distinct > limit)
      continue;
    ColumnValues v = readColumn(data, int(c), stage);
    FacetColumn f;
    f.name = data.metadata.columnNames[c];
    f.numeric = v.numeric;
    f.values = std::move(v.numbers);
    f.minimum = v.minimum;
    f.maximum = v.maximum;
    f.categories = std::move(v.categories);
    f.category = std::move(v.category);
    out.push_back(std::move(f));
  }
  return out;
}

FacetBrush parseFacetBrush(std::string_view text) {
  const auto fail = [&text](const std::string& why) -> FacetBrush {
    throw InvalidArgument("facet filter '" + std::string(text) + "': " + why +
                          " (COLUMN=VALUE, COLUMN=A|B or COLUMN=FROM..TO)");
  };
  const auto eq = text.find('=');
  if (eq == std::string_view::npos)
    return fail("no '='");
  FacetBrush brush;
  brush.column = trimmed(text.substr(0, eq));
  if (brush.column.empty())
    return fail("no column before '='");
  const std::string_view value = text.substr(eq + 1);
  if (const auto dots = value.find(".."); dots != std::string_view::npos) {
    const std::string from = trimmed(value.substr(0, dots)), to = trimmed(value.substr(dots + 2));
    const std::optional<double> a = from.empty() ? -INFINITY : number(from);
    const std::optional<double> b = to.empty() ? INFINITY : number(to);
    if (!a || !b || (from.empty() && to.empty()))
      return fail("a range needs numbers at one end at least");
    if (!(*a <= *b))
      return fail("FROM must not exceed TO");
    brush.range = std::pair{*a, *b};
    return brush;
  }
  std::size_t start = 0;
  while (start <= value.size()) {
    const auto bar = value.find('|', start);
    const std::string one = std::string(
        value.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    brush.values.push_back(one);
    if (bar == std::string_view::npos)
      break;
    start = bar + 1;
  }
  return brush;
}

std::string facetBrushText(const FacetBrush& brush) {
  std::string out = brush.column + "=";
  if (brush.range) {
    const auto end = [](double v) {
      if (std::isinf(v))
        return std::string();
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", v);
      return std::string(buffer);
    };
    return out + end(brush.range->first) + ".." + end(brush.range->second);
  }
  for (std::size_t i = 0; i < brush.values.size(); ++i)
    out += (i ? "|" : "") + brush.values[i];
  return out;
}

FacetPass facetPass(std::span<const FacetColumn> columns, std::span<const FacetBrush> brushes) {
  std::size_t n = 0;
  for (const FacetColumn& c : columns)
    n = std::max(n, c.numeric ? c.values.size() : c.category.size());
  FacetPass pass;
  pass.failed.assign(n, 0);
  pass.lastFailed.assign(n, -1);
  for (const FacetBrush& brush : brushes) {
    const auto found = std::find_if(columns.begin(), columns.end(), [&brush](const FacetColumn& c) {
      return c.name == brush.column;
    });
    if (found == columns.end())
      throw InvalidArgument("facet filter on '" + brush.column +
                            "': no such facet column (columns: " + columnList(columns) + ")");
    const FacetColumn& column = *found;
    const std::int32_t index = std::int32_t(found - columns.begin());
    std::vector<bool> accepted; // categorical: per category
    if (column.numeric) {
      if (!brush.range)
        throw InvalidArgument("facet filter on '" + brush.column +
                              "': a numeric column takes a range FROM..TO");
    } else {
      if (brush.range)
        throw InvalidArgument("facet filter on '" + brush.column +
                              "': a column of categories takes values, not a range");
      accepted.assign(column.categories.size(), false);
      for (const std::string& v : brush.values)
        for (std::size_t k = 0; k < column.categories.size(); ++k)
          if (column.categories[k] == v)
            accepted[k] = true;
    }
    for (std::size_t i = 0; i < n; ++i) {
      bool ok = false;
      if (column.numeric) {
        const double v = i < column.values.size() ? column.values[i] : NAN;
        ok = v >= brush.range->first && v <= brush.range->second; // NaN fails
      } else if (i < column.category.size()) {
        ok = accepted[std::size_t(column.category[i])];
      }
      if (!ok) {
        pass.failed[i] = std::uint8_t(std::min(255, pass.failed[i] + 1));
        pass.lastFailed[i] = index;
      }
    }
  }
  return pass;
}

int FacetCounts::binOf(const FacetColumn& c, std::size_t item) const {
  if (!c.numeric) {
    if (item >= c.category.size())
      return -1;
    return labelOf[std::size_t(c.category[item])];
  }
  const double v = item < c.values.size() ? c.values[item] : NAN;
  if (!std::isfinite(v) || edges.size() < 2)
    return -1;
  const int bins = int(edges.size()) - 1;
  const double lo = edges.front(), hi = edges.back();
  if (!(hi > lo))
    return 0;
  const double t = logBins ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
  return std::clamp(int(std::floor(t * bins)), 0, bins - 1);
}

FacetCounts countFacet(std::span<const FacetColumn> columns, int index, const FacetPass& pass,
                       std::span<const std::int64_t> selection, int bins, int top) {
  NEARSCAPE_EXPECTS(index >= 0 && std::size_t(index) < columns.size(),
                    "no facet column " + std::to_string(index));
  NEARSCAPE_EXPECTS(bins >= 1 && top >= 1, "bins and top must be at least 1");
  const FacetColumn& c = columns[std::size_t(index)];
  FacetCounts out;
  out.column = c.name;
  out.numeric = c.numeric;
  if (c.numeric) {
    const double lo = c.minimum, hi = c.maximum;
    out.logBins = lo > 0 && hi / lo > 100;
    out.edges.resize(std::size_t(bins) + 1);
    for (int b = 0; b <= bins; ++b)
      out.edges[std::size_t(b)] = out.logBins ? lo * std::pow(hi / lo, double(b) / bins)
                                              : lo + (hi - lo) * double(b) / bins;
    out.edges.back() = hi;
  } else {
    // The `top` most frequent values, then "other" for the rest (when more than one remains).
    const std::size_t m = c.categories.size();
    const std::size_t shown = m <= std::size_t(top) + 1 ? m : std::size_t(top);
    out.labelOf.assign(m, std::int32_t(shown));
    for (std::size_t k = 0; k < shown; ++k) {
      out.labels.push_back(c.categories[k]);
      out.labelOf[k] = std::int32_t(k);
    }
    if (shown < m) {
      out.hasOther = true;
      out.labels.push_back("other (" + std::to_string(m - shown) + " values)");
    }
  }
  const std::size_t slots = c.numeric ? out.edges.size() - 1 : out.labels.size();
  out.total.assign(slots, 0);
  out.filtered.assign(slots, 0);
  out.selected.assign(slots, 0);
  const std::size_t n = pass.failed.size();
  auto chosen = selection.begin();
  for (std::size_t i = 0; i < n; ++i) {
    const int bin = out.binOf(c, i);
    const bool passes = pass.passes(i, index);
    while (chosen != selection.end() && *chosen < std::int64_t(i))
      ++chosen;
    const bool selected = passes && chosen != selection.end() && *chosen == std::int64_t(i);
    if (bin < 0) {
      ++out.missingTotal;
      out.missingFiltered += passes;
      out.missingSelected += selected;
      continue;
    }
    ++out.total[std::size_t(bin)];
    out.filtered[std::size_t(bin)] += passes;
    out.selected[std::size_t(bin)] += selected;
  }
  return out;
}

} // namespace nearscape

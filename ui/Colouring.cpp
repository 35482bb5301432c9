#include "Colouring.h"

#include "Colors.h"
#include "nearscape/core/ItemSearch.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <span>

namespace nearscape::ui {
namespace {

void put(std::vector<std::uint8_t>& rgb, std::size_t item, const QColor& c) {
  rgb[3 * item] = std::uint8_t(c.red());
  rgb[3 * item + 1] = std::uint8_t(c.green());
  rgb[3 * item + 2] = std::uint8_t(c.blue());
}

/// Groups from per-item category indices (`names` in the order the legend lists them): past
/// kMaxCategories, the rare ones join one "other" group (Colouring.h: kRareShare, kMaxGroups).
void fillGroups(ColourScheme& s, const std::vector<std::int32_t>& category,
                const std::vector<std::string>& names, const std::vector<std::int64_t>& counts) {
  const std::size_t m = names.size();
  std::int64_t total = 0;
  for (const std::int64_t c : counts)
    total += c;
  // Rank by frequency (ties: the listed order) to decide which fold.
  std::vector<std::size_t> byCount(m);
  for (std::size_t g = 0; g < m; ++g)
    byCount[g] = g;
  std::stable_sort(byCount.begin(), byCount.end(),
                   [&counts](std::size_t a, std::size_t b) { return counts[a] > counts[b]; });
  std::vector<bool> folds(m, false);
  std::size_t folded = 0;
  for (std::size_t rank = std::size_t(kMaxCategories); rank < m; ++rank) {
    const std::size_t g = byCount[rank];
    if (double(counts[g]) < kRareShare * double(total) || rank >= std::size_t(kMaxGroups))
      folds[g] = true, ++folded;
  }
  if (folded == 1)
    std::fill(folds.begin(), folds.end(), false);
  std::vector<std::int32_t> groupOf(m);
  for (std::size_t g = 0; g < m; ++g) {
    if (folds[g])
      continue;
    groupOf[g] = std::int32_t(s.groupNames.size());
    s.groupColors.push_back(labelColor(int(g))); // as other views colour label g
    s.groupNames.push_back(names[g]);
    s.groupCounts.push_back(counts[g]);
  }
  if (folded > 1) {
    qint64 rest = 0;
    for (std::size_t g = 0; g < m; ++g)
      if (folds[g])
        rest += counts[g], groupOf[g] = std::int32_t(s.groupNames.size());
    s.groupNames.push_back(QObject::tr("other (%1 values)").arg(folded).toStdString());
    s.groupCounts.push_back(rest);
    s.groupColors.push_back(missingColor());
  }
  s.group.resize(category.size());
  s.rgb.resize(3 * category.size());
  for (std::size_t i = 0; i < category.size(); ++i) {
    s.group[i] = groupOf[std::size_t(category[i])];
    put(s.rgb, i, s.groupColors[std::size_t(s.group[i])]);
  }
}

} // namespace

QColor viridis(double t) {
  // Eleven samples of matplotlib's viridis, interpolated linearly in RGB.
  static const QRgb kStops[] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
  constexpr int kLast = int(sizeof(kStops) / sizeof(kStops[0])) - 1;
  if (!std::isfinite(t))
    return missingColor();
  const double x = std::clamp(t, 0.0, 1.0) * kLast;
  const int i = std::min(int(x), kLast - 1);
  const double f = x - i;
  const QColor a = QColor::fromRgb(kStops[i]), b = QColor::fromRgb(kStops[i + 1]);
  return QColor(int(std::lround(a.red() + f * (b.red() - a.red()))),
                int(std::lround(a.green() + f * (b.green() - a.green()))),
                int(std::lround(a.blue() + f * (b.blue() - a.blue()))));
}

QColor missingColor() {
  return QColor(150, 150, 150);
}

ColourScheme labelScheme(const Dataset& data) {
  ColourScheme s;
  s.name = QStringLiteral("label");
  const std::size_t n = std::size_t(data.size());
  if (!data.hasLabels()) { // one colour, and no groups for the legend to list
    s.rgb.resize(3 * n);
    for (std::size_t i = 0; i < n; ++i)
      put(s.rgb, i, unlabelledColor());
    return s;
  }
  // The labels keep their order (the legend lists them as the file does).
  std::vector<std::int64_t> counts(data.labelNames.size(), 0);
  for (const auto label : data.labels)
    ++counts[std::size_t(label)];
  fillGroups(s, data.labels, data.labelNames, counts);
  return s;
}

ColourScheme columnScheme(const Dataset& data, int column, JobControl& job) {
  const ColumnValues v = readColumn(data, column, job);
  const QString name = QString::fromStdString(data.metadata.columnNames[std::size_t(column)]);
  job.check();
  if (v.numeric)
    return numericScheme(name, v.numbers);
  return categoryScheme(name, v.category, v.categories, v.counts);
}

ColourScheme categoryScheme(const QString& name, const std::vector<std::int32_t>& category,
                            const std::vector<std::string>& names,
                            const std::vector<std::int64_t>& counts) {
  ColourScheme s;
  s.name = name;
  fillGroups(s, category, names, counts);
  return s;
}

ColumnChoices columnChoices(const Dataset& data, JobControl& job) {
  ColumnChoices out;
  const std::size_t columns = data.metadata.columnNames.size();
  for (std::size_t c = 0; c < columns; ++c) {
    const QString name = QString::fromStdString(data.metadata.columnNames[c]);
    // The column the labels came from ("Label", "class", …) is offered as "label" already.
    const bool labelsFromIt =
        data.hasLabels() && QString::fromStdString(data.labelSource).endsWith(" (" + name + ")");
    if (name == QStringLiteral("label") || labelsFromIt || out.colourable.contains(name))
      continue;
    JobControl stage = job.sub(double(c) / double(columns), double(c + 1) / double(columns));
    const std::int64_t limit = std::max<std::int64_t>(kMaxCategories, data.size() / 2);
    const ColumnSummary v = summarizeColumn(data, int(c), limit, stage);
    if (v.numeric || v.distinct <= limit)
      out.colourable << name;
    if (v.numeric)
      out.numeric << name;
  }
  return out;
}

std::vector<std::uint8_t> sizeClasses(const std::vector<double>& values) {
  double lo = INFINITY, hi = -INFINITY;
  for (const double x : values)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  std::vector<std::uint8_t> classes(values.size(), 1);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::isfinite(values[i]) && hi > lo)
      classes[i] = std::uint8_t(std::min(3.0, std::floor(4.0 * (values[i] - lo) / (hi - lo))));
  return classes;
}

ColourScheme numericScheme(const QString& name, const std::vector<double>& values,
                           ColourScaleKind asked) {
  ColourScheme s;
  s.name = name;
  s.numeric = true;
  s.values = values;
  auto sorted = std::make_shared<std::vector<double>>();
  sorted->reserve(values.size());
  for (const double v : values)
    if (std::isfinite(v))
      sorted->push_back(v);
  std::sort(sorted->begin(), sorted->end());
  s.minimum = sorted->empty() ? 0.0 : sorted->front();
  s.maximum = sorted->empty() ? 0.0 : sorted->back();
  s.autoScale = autoColourScale(*sorted);
  s.sorted = std::move(sorted);
  paintNumeric(s, asked);
  return s;
}

void paintNumeric(ColourScheme& s, ColourScaleKind asked,
                  std::optional<std::pair<double, double>> range) {
  if (!s.numeric || !s.sorted)
    return;
  std::span<const double> fitted(*s.sorted);
  if (range) {
    const auto first = std::lower_bound(fitted.begin(), fitted.end(), range->first);
    const auto last = std::upper_bound(first, fitted.end(), range->second);
    if (last > first) // an empty range keeps the whole data's scale
      fitted = fitted.subspan(std::size_t(first - fitted.begin()), std::size_t(last - first));
  }
  s.scale = fitColourScale(fitted, asked == ColourScaleKind::Auto ? s.autoScale : asked);
  s.rgb.resize(3 * s.values.size());
  for (std::size_t i = 0; i < s.values.size(); ++i)
    put(s.rgb, i, std::isfinite(s.values[i]) ? viridis(s.scale.at(s.values[i])) : missingColor());
}

std::vector<std::uint8_t> fadedBy(const std::vector<std::uint8_t>& rgb,
                                  const std::vector<double>& values, const QColor& background) {
  constexpr double kFaintest = 0.15;
  double low = INFINITY, high = -INFINITY;
  for (const double v : values)
    if (std::isfinite(v))
      low = std::min(low, v), high = std::max(high, v);
  const double span = high > low ? high - low : 1.0;
  const int bg[3] = {background.red(), background.green(), background.blue()};
  std::vector<std::uint8_t> out(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i) {
    const double v = i / 3 < values.size() ? values[i / 3] : NAN;
    const double opacity =
        std::isfinite(v) ? kFaintest + (1.0 - kFaintest) * (v - low) / span : kFaintest;
    out[i] = std::uint8_t(std::lround(bg[i % 3] + opacity * (rgb[i] - bg[i % 3])));
  }
  return out;
}

std::vector<std::uint8_t> dimmedExcept(const std::vector<std::uint8_t>& rgb,
                                       const std::vector<std::int64_t>& matches,
                                       const QColor& background) {
  constexpr double kFade = 0.82; // how far toward the background the others go
  std::vector<std::uint8_t> out(rgb.size());
  const int bg[3] = {background.red(), background.green(), background.blue()};
  for (std::size_t i = 0; i < rgb.size(); ++i)
    out[i] = std::uint8_t(std::lround(rgb[i] + kFade * (bg[i % 3] - rgb[i])));
  for (const std::int64_t item : matches)
    for (int c = 0; c < 3; ++c)
      out[std::size_t(3 * item + c)] = rgb[std::size_t(3 * item + c)];
  return out;
}

std::vector<std::uint8_t> dimmedWhere(const std::vector<std::uint8_t>& rgb,
                                      const std::vector<std::uint8_t>& keep,
                                      const QColor& background) {
  if (keep.size() * 3 != rgb.size())
    return rgb;
  constexpr double kFade = 0.82; // as far as dimmedExcept's
  const int bg[3] = {background.red(), background.green(), background.blue()};
  std::vector<std::uint8_t> out(rgb);
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (!keep[i])
      for (std::size_t c = 0; c < 3; ++c)
        out[3 * i + c] =
            std::uint8_t(std::lround(rgb[3 * i + c] + kFade * (bg[c] - rgb[3 * i + c])));
  return out;
}

} // namespace nearscape::ui

#include "Colouring.h"

#include "Colors.h"
#include "nearscape/core/ItemSearch.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace nearscape::ui {
namespace {

void put(std::vector<std::uint8_t>& rgb, std::size_t item, const QColor& c) {
  rgb[3 * item] = std::uint8_t(c.red());
  rgb[3 * item + 1] = std::uint8_t(c.green());
  rgb[3 * item + 2] = std::uint8_t(c.blue());
}

/// Groups from per-item category indices ordered by frequency: beyond kMaxCategories, the tail
/// joins one "other" group.
void fillGroups(ColourScheme& s, const std::vector<std::int32_t>& category,
                const std::vector<std::string>& names, const std::vector<std::int64_t>& counts) {
  const bool folded = int(names.size()) > kMaxCategories;
  const int kept = folded ? kMaxCategories - 1 : int(names.size());
  for (int g = 0; g < kept; ++g) {
    s.groupNames.push_back(names[std::size_t(g)]);
    s.groupCounts.push_back(counts[std::size_t(g)]);
    s.groupColors.push_back(labelColor(g));
  }
  if (folded) {
    qint64 rest = 0;
    for (std::size_t g = std::size_t(kept); g < counts.size(); ++g)
      rest += counts[g];
    s.groupNames.push_back(
        QObject::tr("other (%1 values)").arg(names.size() - std::size_t(kept)).toStdString());
    s.groupCounts.push_back(rest);
    s.groupColors.push_back(missingColor());
  }
  s.group.resize(category.size());
  s.rgb.resize(3 * category.size());
  for (std::size_t i = 0; i < category.size(); ++i) {
    s.group[i] = std::min(category[i], std::int32_t(kept));
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
  ColourScheme s;
  s.name = name;
  fillGroups(s, v.category, v.categories, v.counts);
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

ColourScheme numericScheme(const QString& name, const std::vector<double>& values) {
  ColourScheme s;
  s.name = name;
  s.numeric = true;
  s.minimum = INFINITY, s.maximum = -INFINITY;
  for (double v : values)
    if (std::isfinite(v))
      s.minimum = std::min(s.minimum, v), s.maximum = std::max(s.maximum, v);
  if (s.minimum > s.maximum)
    s.minimum = s.maximum = 0;
  const double span = s.maximum > s.minimum ? s.maximum - s.minimum : 1.0;
  s.values = values;
  s.rgb.resize(3 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    put(s.rgb, i,
        std::isfinite(values[i]) ? viridis((values[i] - s.minimum) / span) : missingColor());
  return s;
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

} // namespace nearscape::ui

// The explorer's colour scales (ui/ColourScale: linear, log, quantile, and "auto"'s skew rule)
// and its legend's groups (which categories fold into "other"), without a display.
#include "ColourScale.h"
#include "Colouring.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace nearscape;
using namespace nearscape::ui;

namespace {

/// `n` values spread evenly in log from 1 to `top`: sizes, counts, prices spanning decades.
std::vector<double> logUniform(int n, double top) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    v[std::size_t(i)] = std::exp(std::log(top) * (i + 0.5) / n);
  return v;
}

std::vector<double> sortedCopy(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

QColor colourOf(const ColourScheme& s, std::size_t i) {
  return QColor(s.rgb[3 * i], s.rgb[3 * i + 1], s.rgb[3 * i + 2]);
}

} // namespace

class TestColouring : public QObject {
  Q_OBJECT

private slots:
  void namesRoundTrip() {
    for (const ColourScaleKind kind : {ColourScaleKind::Auto, ColourScaleKind::Linear,
                                       ColourScaleKind::Log, ColourScaleKind::Quantile})
      QCOMPARE(parseColourScale(colourScaleName(kind)), std::optional(kind));
    QVERIFY(!parseColourScale("logarithmic"));
    QVERIFY(!parseColourScale(""));
  }

  void autoPicksBySkew() {
    // Even spread: linear. Log-uniform 1 … 5,000 (the `size` column that painted everything
    // dark): log, whose logarithms are even. A Pareto tail (log of it still skewed, 2): quantile.
    // Skewed with values ≤ 0 (no logarithm): quantile.
    std::vector<double> even(1000);
    for (int i = 0; i < 1000; ++i)
      even[std::size_t(i)] = i;
    QCOMPARE(autoColourScale(even), ColourScaleKind::Linear);
    const std::vector<double> sizes = logUniform(1000, 5000);
    QVERIFY(skewness(sizes) > 1);
    QCOMPARE(autoColourScale(sizes), ColourScaleKind::Log);
    std::vector<double> pareto(1000);
    for (int i = 0; i < 1000; ++i)
      pareto[std::size_t(i)] = std::pow(1.0 - (i + 0.5) / 1000, -1.0 / 1.5);
    QCOMPARE(autoColourScale(pareto), ColourScaleKind::Quantile);
    std::vector<double> shifted = sizes;
    for (double& v : shifted)
      v -= 10; // some ≤ 0
    QCOMPARE(autoColourScale(shifted), ColourScaleKind::Quantile);
    // NaN (no value) is ignored; constant data is not skewed.
    std::vector<double> withNan = sizes;
    withNan.push_back(NAN);
    QCOMPARE(autoColourScale(withNan), ColourScaleKind::Log);
    QCOMPARE(autoColourScale(std::vector<double>(50, 3.0)), ColourScaleKind::Linear);
    QCOMPARE(skewness(std::vector<double>{1, 2}), 0.0);
  }

  void logAtAndBelowZero() {
    // Values ≤ 0 have no logarithm: the scale starts at the smallest positive value, and they
    // take the lowest colour with it. Decades are equal steps.
    const std::vector<double> v = sortedCopy({-3, 0, 0, 1, 10, 100, 1000});
    const ColourScale s = fitColourScale(v, ColourScaleKind::Log);
    QCOMPARE(s.kind, ColourScaleKind::Log);
    QCOMPARE(s.low, 1.0);
    QCOMPARE(s.high, 1000.0);
    QCOMPARE(s.at(-3), 0.0);
    QCOMPARE(s.at(0), 0.0);
    QCOMPARE(s.at(1), 0.0);
    QVERIFY(std::abs(s.at(10) - 1.0 / 3) < 1e-12);
    QVERIFY(std::abs(s.at(100) - 2.0 / 3) < 1e-12);
    QCOMPARE(s.at(1000), 1.0);
    QCOMPARE(s.at(1e6), 1.0); // clamped
    QVERIFY(std::isnan(s.at(NAN)));
    // Nothing positive: no logarithm at all, linear instead (and the scale says so).
    const std::vector<double> negative = {-5, -2, 0};
    const ColourScale none = fitColourScale(negative, ColourScaleKind::Log);
    QCOMPARE(none.kind, ColourScaleKind::Linear);
    QCOMPARE(none.at(-5), 0.0);
    QCOMPARE(none.at(0), 1.0);
  }

  void quantileTies() {
    // Half the items are 0: they share one colour (their mid-rank, a quarter up the map), not
    // half the colour map each; the other half spread over the upper half in rank order.
    std::vector<double> v(1000, 0.0);
    for (int i = 500; i < 1000; ++i)
      v[std::size_t(i)] = std::exp(0.01 * i); // skewed: linear would crowd them at the bottom
    const ColourScale s = fitColourScale(sortedCopy(v), ColourScaleKind::Quantile);
    QCOMPARE(s.kind, ColourScaleKind::Quantile);
    QCOMPARE(int(s.breaks.size()), kQuantileSteps + 1);
    QVERIFY2(std::abs(s.at(0) - 0.25) < 0.01, qPrintable(QString::number(s.at(0))));
    double last = s.at(0);
    for (int i = 500; i < 1000; ++i) {
      const double t = s.at(v[std::size_t(i)]);
      QVERIFY(t >= last); // rank order kept
      last = t;
    }
    QCOMPARE(s.at(v.back()), 1.0);
    // The median of the non-zero half sits three quarters up.
    QVERIFY(std::abs(s.at(v[750]) - 0.75) < 0.01);
    // Between breaks: interpolated; outside: clamped.
    QCOMPARE(s.at(-1), 0.0);
    QCOMPARE(s.at(1e9), 1.0);
    // Few values: as many breaks as values; one value: the low end.
    const std::vector<double> three = {1, 2, 3};
    QCOMPARE(fitColourScale(three, ColourScaleKind::Quantile).breaks.size(), std::size_t(3));
    QCOMPARE(fitColourScale(three, ColourScaleKind::Quantile).at(2), 0.5);
    const std::vector<double> one = {7};
    QCOMPARE(fitColourScale(one, ColourScaleKind::Quantile).at(7), 0.0);
  }

  void ticksAreTruthful() {
    // Every tick sits where the scale puts its value; log ticks are powers of ten over many
    // decades; linear ones are round numbers; quantile ones the quartiles' values.
    const std::vector<double> sizes = sortedCopy(logUniform(1000, 5000));
    for (const ColourScaleKind kind :
         {ColourScaleKind::Linear, ColourScaleKind::Log, ColourScaleKind::Quantile}) {
      const ColourScale s = fitColourScale(sizes, kind);
      const auto ticks = s.ticks();
      QVERIFY2(ticks.size() >= 2, colourScaleName(kind).data());
      for (std::size_t i = 0; i < ticks.size(); ++i) {
        QCOMPARE(ticks[i].position, s.at(ticks[i].value));
        QVERIFY(ticks[i].value >= s.low - 1e-9 && ticks[i].value <= s.high + 1e-9);
        if (i > 0)
          QVERIFY(ticks[i].value > ticks[i - 1].value);
      }
      if (kind == ColourScaleKind::Log) {
        QCOMPARE(int(ticks.size()), 3); // 10, 100, 1000 between 1.004 and 4979
        for (const auto& t : ticks)
          QCOMPARE(std::pow(10.0, std::round(std::log10(t.value))), t.value);
        QVERIFY(std::abs(ticks[1].position - ticks[0].position -
                         (ticks[2].position - ticks[1].position)) < 1e-9); // equal decades
      }
      if (kind == ColourScaleKind::Linear)
        for (const auto& t : ticks)
          QCOMPARE(std::fmod(t.value, 1000.0), 0.0);
      if (kind == ColourScaleKind::Quantile) {
        QCOMPARE(int(ticks.size()), 5);
        QVERIFY(std::abs(ticks[2].position - 0.5) < 0.01);
      }
    }
    // A log scale within one decade: 2× and 5× too.
    const std::vector<double> narrow = {1.5, 3, 9};
    const auto ticks = fitColourScale(narrow, ColourScaleKind::Log).ticks();
    QCOMPARE(int(ticks.size()), 2); // 2 and 5
    QCOMPARE(ticks[0].value, 2.0);
    QCOMPARE(ticks[1].value, 5.0);
  }

  void skewedColumnSpansThePalette() {
    // The 1 … 5,000 sizes on auto: log, and the colours cover the colour map evenly — a
    // linear scale leaves 90 % of them in its darkest tenth.
    const std::vector<double> sizes = logUniform(2000, 5000);
    ColourScheme s = numericScheme(QStringLiteral("size"), sizes);
    QCOMPARE(s.autoScale, ColourScaleKind::Log);
    QCOMPARE(s.scale.kind, ColourScaleKind::Log);
    auto darkShare = [&s] { // items drawn within the first tenth of viridis
      const QColor tenth = viridis(0.1);
      int dark = 0;
      for (std::size_t i = 0; i < s.values.size(); ++i)
        if (colourOf(s, i).green() <= tenth.green())
          ++dark;
      return double(dark) / double(s.values.size());
    };
    QVERIFY2(darkShare() < 0.15, qPrintable(QString::number(darkShare())));
    QCOMPARE(colourOf(s, 0), viridis(0));
    QCOMPARE(colourOf(s, sizes.size() - 1), viridis(1));
    paintNumeric(s, ColourScaleKind::Linear);
    QVERIFY2(darkShare() > 0.65, qPrintable(QString::number(darkShare())));
    // A range filter rescales: the colours span the range shown, from its first to its last.
    paintNumeric(s, ColourScaleKind::Linear, std::pair{10.0, 100.0});
    QVERIFY(s.scale.low >= 10.0 && s.scale.high <= 100.0);
    std::size_t first = 0, last = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] >= 10 && sizes[i] <= 100)
        last = i, first = first ? first : i;
    QCOMPARE(colourOf(s, first), viridis(0));
    QCOMPARE(colourOf(s, last), viridis(1));
    // An empty range keeps the whole data's scale.
    paintNumeric(s, ColourScaleKind::Linear, std::pair{-10.0, -5.0});
    QCOMPARE(s.scale.low, s.minimum);
  }

  void fiftyEqualClustersAllKeepAColour() {
    // 50 equal clusters: more than the palette's first hues, but none rare: 50 groups, no
    // "other", 50 different colours.
    std::vector<std::string> names;
    std::vector<std::int64_t> counts(50, 20);
    std::vector<std::int32_t> category;
    for (int c = 0; c < 50; ++c)
      names.push_back("c" + std::to_string(c));
    for (int i = 0; i < 1000; ++i)
      category.push_back(i % 50);
    const ColourScheme s = categoryScheme(QStringLiteral("cluster"), category, names, counts);
    QCOMPARE(int(s.groupNames.size()), 50);
    std::set<QRgb> colours;
    for (const QColor& c : s.groupColors) {
      QVERIFY(c != missingColor());
      colours.insert(c.rgb());
    }
    QCOMPARE(int(colours.size()), 50);
  }

  void rareTailFolds() {
    // 10 big groups and 300 of one item each: the 10 big and the first 10 of the tail keep
    // colours, the other 290 (each under 0.5 %) fold into one "other".
    std::vector<std::string> names;
    std::vector<std::int64_t> counts;
    std::vector<std::int32_t> category;
    for (int c = 0; c < 310; ++c) {
      names.push_back("c" + std::to_string(c));
      counts.push_back(c < 10 ? 500 : 1);
      for (std::int64_t k = 0; k < counts.back(); ++k)
        category.push_back(c);
    }
    const ColourScheme s = categoryScheme(QStringLiteral("tail"), category, names, counts);
    QCOMPARE(int(s.groupNames.size()), kMaxCategories + 1);
    QCOMPARE(s.groupNames.back(), std::string("other (290 values)"));
    QCOMPARE(s.groupCounts.back(), qint64(290));
    QCOMPARE(s.group.back(), std::int32_t(kMaxCategories));
    // One rare category past the first hues: it keeps its colour (no "other (1 values)").
    names.resize(21);
    counts.resize(21);
    category.resize(5011); // c0 … c20 as counted
    const ColourScheme lone = categoryScheme(QStringLiteral("lone"), category, names, counts);
    QCOMPARE(int(lone.groupNames.size()), 21);
    QVERIFY(lone.groupColors.back() != missingColor());
  }
};

QTEST_MAIN(TestColouring)
#include "tst_colouring.moc"

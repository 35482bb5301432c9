// The map's density image and its moving-camera sample, without a display: counts, crowding,
// colours mixed by count, strengths ordered by density; strata kept in proportion.
#include "DensityImage.h"
#include "StratifiedSample.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace nearscape::ui;

namespace {

/// A 2D mapping where world coordinate (x, y) lands on pixel (x, y) of a w × h image.
ScreenMapping pixelMapping(int w, int h) {
  ScreenMapping m;
  m.centreRight = 0.5 * w;
  m.centreUp = 0.5 * h;
  m.pixelsPerUnit = 1;
  m.width = w;
  m.height = h;
  return m;
}

struct Cloud {
  std::vector<float> xy;
  std::vector<std::uint8_t> rgb;
  void add(float x, float y, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    xy.insert(xy.end(), {x, y});
    rgb.insert(rgb.end(), {r, g, b});
  }
  DensityPoints points() const {
    DensityPoints p;
    p.positions = xy.data();
    p.rgb = rgb.data();
    p.count = std::int64_t(xy.size() / 2);
    return p;
  }
};

const std::uint8_t kBackground[3] = {250, 250, 248};

const std::uint8_t* pixel(const std::vector<std::uint8_t>& image, int w, int x, int y) {
  return &image[(std::size_t(y) * std::size_t(w) + std::size_t(x)) * 3];
}

double inkOf(const std::uint8_t* c) {
  double s = 0;
  for (int k = 0; k < 3; ++k)
    s += std::abs(double(c[k]) - kBackground[k]);
  return s;
}

} // namespace

class TestMapDensity : public QObject {
  Q_OBJECT

private slots:
  void countsCrowdingAndMixedColours() {
    const int w = 40, h = 30;
    Cloud cloud;
    for (int i = 0; i < 1000; ++i) // a crowded pixel: half blue, half orange
      cloud.add(10.5f, 5.5f, i % 2 ? 31 : 255, i % 2 ? 119 : 127, i % 2 ? 180 : 14);
    for (int i = 0; i < 10; ++i) // a sparse one, blue
      cloud.add(30.5f, 25.5f, 31, 119, 180);
    cloud.add(20.5f, 15.5f, 31, 119, 180); // one alone
    cloud.add(-3.0f, 5.0f, 0, 0, 0);       // off screen
    cloud.add(NAN, 5.0f, 0, 0, 0);         // nowhere
    DensityImage image;
    image.accumulate(cloud.points(), pixelMapping(w, h), 1);
    QCOMPARE(image.pointsOnScreen(), 1011.0);
    QVERIFY(std::abs(image.crowding() - (1000.0 * 1000 + 10 * 10 + 1) / 1011.0) < 1e-9);

    std::vector<std::uint8_t> rgb(std::size_t(w * h * 3));
    image.shade(kBackground, 1.0, rgb.data());
    // Uncovered pixels are the background; rows go bottom up (y is the row).
    QCOMPARE(int(pixel(rgb, w, 0, 0)[0]), 250);
    QCOMPARE(int(pixel(rgb, w, 39, 29)[2]), 248);
    // The crowded pixel: the mean of blue and orange, at full strength (the densest).
    const std::uint8_t* crowded = pixel(rgb, w, 10, 5);
    QVERIFY2(std::abs(crowded[0] - 143) <= 1 && std::abs(crowded[1] - 123) <= 1 &&
                 std::abs(crowded[2] - 97) <= 1,
             qPrintable(QString("%1 %2 %3").arg(crowded[0]).arg(crowded[1]).arg(crowded[2])));
    // Strength grows with the count: the lone point faintest.
    const double alone = inkOf(pixel(rgb, w, 20, 15)), sparse = inkOf(pixel(rgb, w, 30, 25));
    QVERIFY2(alone > 0 && alone < sparse, qPrintable(QString("%1 %2").arg(alone).arg(sparse)));
    const double fullBlue = std::abs(31 - 250) + std::abs(119 - 250) + std::abs(180 - 248);
    QVERIFY(std::abs(alone - DensityImage::kFaintest * fullBlue) < 3);

    // Density 0 draws plain points: every covered pixel at its full mean colour.
    image.shade(kBackground, 0.0, rgb.data());
    QCOMPARE(int(pixel(rgb, w, 20, 15)[0]), 31);
    QCOMPARE(int(pixel(rgb, w, 30, 25)[1]), 119);
  }

  void footprintSpreadsEachPoint() {
    Cloud cloud;
    cloud.add(5.5f, 5.5f, 0, 0, 0);
    DensityImage image;
    image.accumulate(cloud.points(), pixelMapping(12, 12), 3);
    std::vector<std::uint8_t> rgb(12 * 12 * 3);
    image.shade(kBackground, 0.0, rgb.data());
    int covered = 0;
    for (int y = 0; y < 12; ++y)
      for (int x = 0; x < 12; ++x)
        covered += pixel(rgb, 12, x, y)[0] == 0;
    QCOMPARE(covered, 9);
    QCOMPARE(int(pixel(rgb, 12, 4, 6)[0]), 0);
    QCOMPARE(image.crowding(), 1.0); // crowding counts each point once, before the spread
  }

  void aSampleEstimatesTheCrowdingOfAll() {
    // 200,000 points over 100 × 100 pixels (20 a pixel, Poisson): Σ N² / Σ N ≈ 21.
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<float> u(0.0f, 100.0f);
    Cloud all;
    for (int i = 0; i < 200000; ++i)
      all.add(u(rng), u(rng), 10, 20, 30);
    DensityImage image;
    image.accumulate(all.points(), pixelMapping(100, 100), 1);
    const double full = image.crowding();
    QVERIFY2(std::abs(full - 21) < 0.5, qPrintable(QString::number(full)));
    Cloud tenth; // a 10% sample standing in for all
    for (std::size_t i = 0; i < all.xy.size() / 2; i += 10)
      tenth.add(all.xy[2 * i], all.xy[2 * i + 1], 10, 20, 30);
    DensityPoints sampled = tenth.points();
    sampled.weight = 10;
    image.accumulate(sampled, pixelMapping(100, 100), 1);
    QVERIFY2(std::abs(image.crowding() - full) < 0.05 * full,
             qPrintable(QString("%1 vs %2").arg(image.crowding()).arg(full)));
    QVERIFY(std::abs(image.pointsOnScreen() - 200000) < 1);
  }

  void hiddenItemsAreNotCounted() {
    Cloud cloud;
    cloud.add(1.5f, 1.5f, 200, 0, 0);
    cloud.add(1.5f, 1.5f, 0, 0, 200);
    const std::vector<bool> visible = {false, true};
    DensityPoints p = cloud.points();
    p.visible = &visible;
    DensityImage image;
    image.accumulate(p, pixelMapping(4, 4), 1);
    std::vector<std::uint8_t> rgb(4 * 4 * 3);
    image.shade(kBackground, 0.0, rgb.data());
    QCOMPARE(int(pixel(rgb, 4, 1, 1)[0]), 0);
    QCOMPARE(int(pixel(rgb, 4, 1, 1)[2]), 200);
  }

  void threeDimensionsProjectThroughTheCamera() {
    // A camera whose right is y and up is z: x is depth, which does not matter.
    Cloud cloud;
    std::vector<float> xyz = {7.0f, 2.5f, 3.5f, -9.0f, 2.5f, 3.5f};
    std::vector<std::uint8_t> rgb = {0, 0, 0, 0, 0, 0};
    ScreenMapping m = pixelMapping(8, 8);
    m.right[0] = 0, m.right[1] = 1, m.right[2] = 0;
    m.up[0] = 0, m.up[1] = 0, m.up[2] = 1;
    DensityPoints p;
    p.positions = xyz.data();
    p.dim = 3;
    p.rgb = rgb.data();
    p.count = 2;
    DensityImage image;
    image.accumulate(p, m, 1);
    QCOMPARE(image.crowding(), 2.0); // both on one pixel
    std::vector<std::uint8_t> out(8 * 8 * 3);
    image.shade(kBackground, 0.0, out.data());
    QCOMPARE(int(pixel(out, 8, 2, 3)[0]), 0);
  }

  void sampleKeepsEveryStratumInProportion() {
    // 90,000 blue, 9,000 orange, 1 green; some blue hidden.
    const std::int64_t n = 99001;
    std::vector<std::uint8_t> rgb(std::size_t(3 * n));
    std::vector<bool> visible(std::size_t(n), true);
    for (std::int64_t i = 0; i < n; ++i) {
      const int kind = i == 5000 ? 2 : i % 11 == 0 ? 1 : 0;
      const std::uint8_t colours[3][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}};
      std::copy(colours[kind], colours[kind] + 3, &rgb[std::size_t(3 * i)]);
      if (kind == 0 && i % 3 == 0)
        visible[std::size_t(i)] = false;
    }
    std::int64_t shown[3] = {}, picked[3] = {};
    auto kindOf = [&](std::int64_t i) {
      return rgb[std::size_t(3 * i)] == 31 ? 0 : rgb[std::size_t(3 * i)] == 255 ? 1 : 2;
    };
    for (std::int64_t i = 0; i < n; ++i)
      shown[kindOf(i)] += visible[std::size_t(i)];
    const std::vector<std::int32_t> sample = stratifiedSample(rgb.data(), n, visible, 5000, 7);
    QVERIFY(std::is_sorted(sample.begin(), sample.end()));
    QCOMPARE(std::set<std::int32_t>(sample.begin(), sample.end()).size(), sample.size());
    for (const std::int32_t i : sample) {
      QVERIFY(visible[std::size_t(i)]);
      ++picked[kindOf(i)];
    }
    const double share = 5000.0 / double(shown[0] + shown[1] + shown[2]);
    for (int k = 0; k < 2; ++k)
      QVERIFY2(std::abs(double(picked[k]) - share * double(shown[k])) <= 1.0,
               qPrintable(QString("kind %1: %2 of %3").arg(k).arg(picked[k]).arg(shown[k])));
    QCOMPARE(picked[2], std::int64_t(1)); // the lone green item is never dropped
    QCOMPARE(stratifiedSample(rgb.data(), n, visible, 5000, 7), sample); // seeded
    QVERIFY(stratifiedSample(rgb.data(), n, visible, 5000, 8) != sample);
    // No more visible items than the budget: all of them.
    const std::vector<std::int32_t> all = stratifiedSample(rgb.data(), n, visible, n, 7);
    QCOMPARE(std::int64_t(all.size()), shown[0] + shown[1] + shown[2]);
  }
};

QTEST_APPLESS_MAIN(TestMapDensity)
#include "tst_map_density.moc"

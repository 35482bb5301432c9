// Hundreds of thousands of points as a person sees them: the density view tells clusters apart
// by colour and strength where single points would be one blob; zooming in turns it back into
// single points, smoothly; a drag draws a sample and the full set returns once the camera rests;
// picking and hover stay exact throughout.
#include "Colors.h"
#include "GuiTest.h"
#include "MainWindow.h"
#include "MapView.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QWheelEvent>

#include <QTest>
#include <cmath>
#include <random>
#include <set>

using namespace nearscape;
using namespace nearscape::ui;
using nearscape::test::countNonBackground;

namespace {

/// Gaussian clusters in 2D, each its label's colour; each cluster's first item sits at its
/// centre, its second 1.5 σ to the right of it.
struct Cluster {
  int label;
  float x, y, sigma;
  int count;
};
const Cluster kClusters[] = {
    {2, -4.0f, 4.0f, 0.3f, 300000},  // A: large and tight (green)
    {3, 4.0f, 4.0f, 0.6f, 150000},   // B (red)
    {4, -4.0f, -4.0f, 1.0f, 100000}, // C: wide and sparse (purple)
    {5, 4.0f, -4.0f, 0.2f, 50000},   // D: small and tight (brown)
    {0, 0.0f, 0.0f, 0.4f, 60000},    // E and F on one place: blue and orange mixed
    {1, 0.0f, 0.0f, 0.4f, 60000},
};

struct Data {
  std::vector<float> xy;
  std::vector<std::uint8_t> rgb;
  std::vector<std::int64_t> first; ///< each cluster's first item (its centre)
};

Data makeData() {
  Data d;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal;
  for (const Cluster& c : kClusters) {
    d.first.push_back(std::int64_t(d.xy.size() / 2));
    const QColor colour = labelColor(c.label);
    for (int i = 0; i < c.count; ++i) {
      float x = c.x + c.sigma * normal(rng), y = c.y + c.sigma * normal(rng);
      if (i == 0)
        x = c.x, y = c.y;
      else if (i == 1)
        x = c.x + 1.5f * c.sigma, y = c.y;
      d.xy.insert(d.xy.end(), {x, y});
      d.rgb.insert(d.rgb.end(), {std::uint8_t(colour.red()), std::uint8_t(colour.green()),
                                 std::uint8_t(colour.blue())});
    }
  }
  return d;
}

/// How far `c` lies from the background toward `full` (1: at `full`, 0: the background).
double strengthToward(const QColor& c, const QColor& full) {
  const QColor bg = MapView::backgroundColor();
  const double ink[3] = {double(full.red() - bg.red()), double(full.green() - bg.green()),
                         double(full.blue() - bg.blue())};
  const double got[3] = {double(c.red() - bg.red()), double(c.green() - bg.green()),
                         double(c.blue() - bg.blue())};
  return (ink[0] * got[0] + ink[1] * got[1] + ink[2] * got[2]) /
         (ink[0] * ink[0] + ink[1] * ink[1] + ink[2] * ink[2]);
}

/// Cosine between the directions from the background to `a` and to `b`.
double sameHue(const QColor& a, const QColor& b) {
  const QColor bg = MapView::backgroundColor();
  const double u[3] = {double(a.red() - bg.red()), double(a.green() - bg.green()),
                       double(a.blue() - bg.blue())};
  const double v[3] = {double(b.red() - bg.red()), double(b.green() - bg.green()),
                       double(b.blue() - bg.blue())};
  return (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) /
         std::sqrt((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) *
                   (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
}

QColor pixelAt(const QImage& image, const QPointF& at) {
  return image.pixelColor(int(at.x()), int(at.y()));
}

void sendMouse(QWidget* w, QEvent::Type type, const QPointF& at, Qt::MouseButton button,
               Qt::MouseButtons buttons) {
  QMouseEvent event(type, at, w->mapToGlobal(at), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(w, &event);
}

/// The item nearest to widget point `at` by brute force over every item (−1 beyond 5 pixels),
/// ties to the smaller id; and its distance.
std::pair<std::int64_t, double> nearestByBruteForce(const std::vector<QPointF>& onScreen,
                                                    const QPointF& at) {
  std::int64_t best = -1;
  double bestD = 5.0;
  for (std::size_t i = 0; i < onScreen.size(); ++i) {
    const double d = std::hypot(onScreen[i].x() - at.x(), onScreen[i].y() - at.y());
    if (d < bestD) {
      bestD = d;
      best = std::int64_t(i);
    }
  }
  return {best, bestD};
}

} // namespace

class TestGuiDensity : public QObject {
  Q_OBJECT

private:
  Data m_data = makeData();

  std::int64_t n() const { return std::int64_t(m_data.xy.size() / 2); }

  /// Picking, and hover through a real mouse move (`hover`; not during a drag, where the move
  /// would pan), return the exact nearest item to a few points beside seeded items (whether or
  /// not a moving camera's sample holds them).
  void checkPickingIsExact(MapView& map, bool hover = true) {
    std::vector<QPointF> onScreen(static_cast<std::size_t>(n()));
    for (std::int64_t i = 0; i < n(); ++i)
      onScreen[std::size_t(i)] = map.widgetPosOf(i);
    QSignalSpy hovered(&map, &MapView::hovered);
    std::vector<std::int64_t> inView;
    for (std::int64_t i = 0; i < n(); ++i)
      if (map.rect().adjusted(2, 2, -2, -2).contains(onScreen[std::size_t(i)].toPoint()))
        inView.push_back(i);
    QVERIFY(inView.size() >= 6);
    std::mt19937_64 rng(5);
    for (int k = 0; k < 6; ++k) {
      const std::int64_t item = inView[rng() % inView.size()];
      const QPointF at = onScreen[std::size_t(item)] + QPointF(0.3, -0.2);
      const auto [best, bestD] = nearestByBruteForce(onScreen, at);
      const std::int64_t got = map.itemAt(at);
      QVERIFY(got >= 0);
      const double gotD = std::hypot(onScreen[std::size_t(got)].x() - at.x(),
                                     onScreen[std::size_t(got)].y() - at.y());
      QVERIFY2(got == best || std::abs(gotD - bestD) < 1e-3,
               qPrintable(QString("picked %1 (%2 px), nearest %3 (%4 px)")
                              .arg(got)
                              .arg(gotD)
                              .arg(best)
                              .arg(bestD)));
      if (!hover)
        continue;
      sendMouse(&map, QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
      QVERIFY(!hovered.isEmpty());
      QCOMPARE(hovered.last().at(0).toLongLong(), got);
    }
  }

private slots:
  void densityTellsClustersApart() {
    MapView map;
    map.resize(900, 700);
    map.show();
    QVERIFY(QTest::qWaitForWindowExposed(&map));
    QCOMPARE(map.densityMode(), MapView::DensityMode::Auto);
    map.setPoints(m_data.xy, 2, m_data.rgb);
    const QImage dense = map.grabFramebuffer();
    QVERIFY(dense.save(artifact("density-auto.png")));
    QVERIFY(map.lastFrame().density);
    QCOMPARE(map.lastFrame().points, n());
    QVERIFY2(map.lastFrame().crowding > MapView::kDensityFull,
             qPrintable(QString::number(map.lastFrame().crowding)));

    auto centre = [&](int c) { return map.widgetPosOf(m_data.first[std::size_t(c)]); };
    auto edge = [&](int c) { return map.widgetPosOf(m_data.first[std::size_t(c)] + 1); };
    auto colourOf = [](int c) { return labelColor(kClusters[c].label); };
    // Each cluster keeps its label's colour, its strength following its density: the tight,
    // large cluster A at full strength, the wide cluster C fainter, its edge fainter still.
    for (int c = 0; c < 4; ++c)
      QVERIFY2(sameHue(pixelAt(dense, centre(c)), colourOf(c)) > 0.99,
               qPrintable(QString("cluster %1: %2").arg(c).arg(pixelAt(dense, centre(c)).name())));
    const double a = strengthToward(pixelAt(dense, centre(0)), colourOf(0));
    const double c0 = strengthToward(pixelAt(dense, centre(2)), colourOf(2));
    const double c1 = strengthToward(pixelAt(dense, edge(2)), colourOf(2));
    QVERIFY2(a > 0.85 && c0 < a - 0.1 && c1 < c0 - 0.08,
             qPrintable(QString("A %1, C centre %2, C edge %3").arg(a).arg(c0).arg(c1)));
    // Where two labels share the place, their colours mix by count.
    const QColor mixed = pixelAt(dense, centre(4));
    const QColor blue = labelColor(0), orange = labelColor(1);
    const QColor mean((blue.red() + orange.red()) / 2, (blue.green() + orange.green()) / 2,
                      (blue.blue() + orange.blue()) / 2);
    QVERIFY2(sameHue(mixed, mean) > 0.98 && sameHue(mixed, blue) < 0.93 &&
                 sameHue(mixed, orange) < 0.93,
             qPrintable(mixed.name()));
    // Many shades inside cluster C, not one saturated blob.
    auto shadesAround = [&](const QImage& image, const QPointF& at, int radius) {
      std::set<QRgb> shades;
      for (int y = int(at.y()) - radius; y <= int(at.y()) + radius; ++y)
        for (int x = int(at.x()) - radius; x <= int(at.x()) + radius; ++x)
          shades.insert(image.pixel(x, y));
      return shades.size();
    };
    const std::size_t denseShades = shadesAround(dense, centre(0), 20);

    // Single points at the same view: the clusters' cores are one flat colour, whatever their
    // density (what the density view replaces).
    map.setDensityMode(MapView::DensityMode::Off);
    const QImage flat = map.grabFramebuffer();
    QVERIFY(flat.save(artifact("density-off.png")));
    QVERIFY(!map.lastFrame().density);
    QCOMPARE(map.lastFrame().crowding, 0.0);
    QVERIFY(strengthToward(pixelAt(flat, centre(2)), colourOf(2)) > 0.95);
    const std::size_t flatShades = shadesAround(flat, centre(0), 20);
    QVERIFY2(denseShades > 4 * flatShades,
             qPrintable(QString("%1 shades, %2 as points").arg(denseShades).arg(flatShades)));
    // Forced on, the density view stays even where auto would not need it.
    map.setDensityMode(MapView::DensityMode::On);
    map.grabFramebuffer();
    QVERIFY(map.lastFrame().density);
    QCOMPARE(map.lastFrame().strength, 1.0);
    map.setDensityMode(MapView::DensityMode::Auto);

    checkPickingIsExact(map);
  }

  void zoomingInTurnsToSinglePointsSmoothly() {
    MapView map;
    map.resize(900, 700);
    map.show();
    QVERIFY(QTest::qWaitForWindowExposed(&map));
    map.setPoints(m_data.xy, 2, m_data.rgb);
    map.grabFramebuffer();
    QVERIFY(map.lastFrame().density);
    // The wheel, step by step, onto the edge of the wide cluster C.
    const QPointF at = map.widgetPosOf(m_data.first[2] + 1);
    std::vector<double> strengths;
    bool points = false;
    for (int step = 0; step < 40 && !points; ++step) {
      QWheelEvent wheel(at, map.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(&map, &wheel);
      map.grabFramebuffer();
      QVERIFY(map.cameraMoving());
      points = !map.lastFrame().density;
      if (!points)
        strengths.push_back(map.lastFrame().strength);
    }
    QVERIFY2(points, "still the density view after 40 wheel steps");
    // The shading faded out on the way: some frames in between, the last before the points
    // nearly plain (so the switch shows no jump).
    QVERIFY(std::any_of(strengths.begin(), strengths.end(),
                        [](double s) { return s > 0.1 && s < 0.9; }));
    QVERIFY2(!strengths.empty() && strengths.back() < 0.1,
             qPrintable(QString::number(strengths.empty() ? -1 : strengths.back())));
    for (int step = 0; step < 6; ++step) { // on in, the points spread apart
      QWheelEvent wheel(at, map.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(&map, &wheel);
      map.grabFramebuffer();
      QVERIFY(!map.lastFrame().density);
    }
    // At rest: every point, drawn singly, each its label's colour.
    QTRY_VERIFY_WITH_TIMEOUT(!map.cameraMoving(), 3000);
    const QImage zoomed = map.grabFramebuffer();
    QVERIFY(zoomed.save(artifact("density-zoomed.png")));
    QVERIFY(!map.lastFrame().density);
    QVERIFY(!map.lastFrame().sampled);
    QCOMPARE(map.lastFrame().points, n());
    const int covered = countNonBackground(zoomed);
    int pure = 0;
    for (int y = 0; y < zoomed.height(); ++y)
      for (int x = 0; x < zoomed.width(); ++x) {
        const QColor c = zoomed.pixelColor(x, y);
        for (const Cluster& cluster : kClusters) {
          const QColor l = labelColor(cluster.label);
          if (std::abs(c.red() - l.red()) + std::abs(c.green() - l.green()) +
                  std::abs(c.blue() - l.blue()) <=
              12) {
            ++pure;
            break;
          }
        }
      }
    QVERIFY2(covered > 2000 && covered < zoomed.width() * zoomed.height() * 6 / 10 &&
                 pure > covered * 9 / 10,
             qPrintable(QString("%1 covered, %2 pure").arg(covered).arg(pure)));
    checkPickingIsExact(map);
  }

  void aDragDrawsASampleThenEveryPoint() {
    for (const auto mode : {MapView::DensityMode::Auto, MapView::DensityMode::Off}) {
      MapView map;
      map.setDensityMode(mode);
      map.resize(900, 700);
      map.show();
      QVERIFY(QTest::qWaitForWindowExposed(&map));
      map.setPoints(m_data.xy, 2, m_data.rgb);
      const QImage still = map.grabFramebuffer();
      QCOMPARE(map.lastFrame().points, n());
      QVERIFY(!map.lastFrame().sampled);
      const bool density = map.lastFrame().density;
      QCOMPARE(density, mode == MapView::DensityMode::Auto);

      const QPointF from(450, 350);
      sendMouse(&map, QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
      QImage moving;
      for (int step = 1; step <= 5; ++step) {
        sendMouse(&map, QEvent::MouseMove, from + QPointF(8 * step, 3 * step), Qt::NoButton,
                  Qt::LeftButton);
        moving = map.grabFramebuffer();
        QVERIFY(map.lastFrame().sampled);
        QCOMPARE(map.lastFrame().density, density);
        const std::int64_t drawn = map.lastFrame().points;
        QVERIFY2(drawn < n() / 2 && drawn >= MapView::kMovingBudget * 9 / 10,
                 qPrintable(QString::number(drawn)));
      }
      QVERIFY(moving.save(
          artifact(mode == MapView::DensityMode::Off ? "drag-points.png" : "drag-density.png")));
      if (!density) // fewer points: fewer pixels covered at the clusters' edges
        QVERIFY(countNonBackground(moving) < countNonBackground(still));
      checkPickingIsExact(map, false); // the sample is only drawn: picking sees every item
      sendMouse(&map, QEvent::MouseButtonRelease, from + QPointF(40, 15), Qt::LeftButton,
                Qt::NoButton);
      QElapsedTimer sinceStop;
      sinceStop.start();
      QTRY_VERIFY_WITH_TIMEOUT(!map.lastFrame().sampled, 5000);
      // Target: full quality within 1 s of stopping (nearscape-bench-render measures it).
      QVERIFY2(sinceStop.elapsed() < 2000, qPrintable(QString::number(sinceStop.elapsed())));
      QCOMPARE(map.lastFrame().points, n());
      QCOMPARE(map.lastFrame().density, density);
    }
  }

  void viewMenuChoosesTheMode() {
    MainWindow window;
    window.show();
    QAction* single = nullptr;
    QAction* automatic = nullptr;
    for (QAction* a : window.findChildren<QAction*>()) {
      if (a->text() == QStringLiteral("&Single Points"))
        single = a;
      if (a->text() == QStringLiteral("&Automatic"))
        automatic = a;
    }
    QVERIFY(single && automatic);
    QVERIFY(automatic->isChecked());
    single->trigger();
    QCOMPARE(window.mapView()->densityMode(), MapView::DensityMode::Off);
    window.setDensityMode(MapView::DensityMode::Auto);
    QVERIFY(automatic->isChecked());
    QVERIFY(!single->isChecked());
  }

private:
  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiDensity>(argc, argv);
}
#include "tst_gui_density.moc"

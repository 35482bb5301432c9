#pragma once
// What the GUI tests share: counting what the map drew, and a main() that gives each run its own
// artefact cache and preferences.

#include "MapView.h"
#include "UiMain.h"

#include <QApplication>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>

namespace nearscape::test {

/// Pixels that differ from the map's background.
inline int countNonBackground(const QImage& image) {
  const QRgb bg = ui::MapView::backgroundColor().rgb();
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x)
      count += (image.pixel(x, y) & 0xffffff) != (bg & 0xffffff);
  return count;
}

/// Pixels within a small distance of `color`.
inline int countColor(const QImage& image, const QColor& color) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      count += std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
                   std::abs(c.blue() - color.blue()) <=
               12;
    }
  return count;
}

/// Runs the test object of type `Test` as a GUI test: a fresh artefact cache (every run
/// computes; the person's own cache is left alone) and preferences of this run only.
template <typename Test> int runGuiTest(int argc, char** argv) {
  QTemporaryDir scratch;
  qputenv("NEARSCAPE_ARTEFACT_CACHE", scratch.path().toUtf8());
  qputenv("XDG_CONFIG_HOME", scratch.path().toUtf8());
  ui::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  Test test;
  return QTest::qExec(&test, argc, argv);
}

} // namespace nearscape::test

// nearscape-bench-render: how the map (ui::MapView) feels at 100k, 1M and 10M points — a still
// frame, each frame while a drag pans the map (beyond MapView::kMovingBudget visible points a
// moving camera draws a stratified sample), and the time from the drag's end to the full-quality
// frame — over the whole map (the density view, where points crowd) and zoomed in on its densest
// cluster (single points). The map renders in a window of its own: run it under Xvfb where there
// is no display. Every timed frame is read back (grabFramebuffer) or finished (glFinish), so a
// time includes the OpenGL implementation's own work (llvmpipe's rasterising threads).
//   nearscape-bench-render [--counts 100000,1000000,10000000] [--size 1280x800] [--frames 30]
//                          [--density auto|on|off] [--3d] [--pictures PREFIX]
//   nearscape-bench-render --open FILE [--wait S] [--pictures PREFIX] [--density …]
// (--pictures saves each view at rest as PREFIX-N-whole.png and PREFIX-N-zoomed.png.)
// --open times the explorer itself on a file: until its map is on screen, the frames of a drag
// over it, and the process's memory (anonymous, and file pages: the memory-mapped data) then and
// at its peak over the next S seconds of the exploration (default 0), after which it exits.
// Data: seeded Gaussian clusters of different sizes and spreads plus 5% uniform noise, coloured
// by cluster as labels are.
#include "Colors.h"
#include "Colouring.h"
#include "Export.h"
#include "MainWindow.h"
#include "MapView.h"
#include "UiMain.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFunctions>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace nearscape;
using ui::MapView;

namespace {

constexpr int kClusters = 12;

struct Points {
  std::vector<float> positions;
  std::vector<std::uint8_t> rgb;
  float densestX = 0, densestY = 0; ///< the centre of the tightest large cluster
};

Points clustered(std::int64_t n, int dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> normal;
  float centre[kClusters][3], spread[kClusters];
  double weight[kClusters], total = 0;
  for (int c = 0; c < kClusters; ++c) {
    for (int k = 0; k < 3; ++k)
      centre[c][k] = 10.0f * uniform(rng);
    spread[c] = 0.15f + 0.9f * (0.5f + 0.5f * uniform(rng));
    weight[c] = 1.0 + 4.0 * (c % 4);
    total += weight[c];
  }
  int densest = 0;
  for (int c = 1; c < kClusters; ++c)
    if (weight[c] / spread[c] > weight[densest] / spread[densest])
      densest = c;
  Points p;
  p.positions.resize(std::size_t(n) * std::size_t(dim));
  p.rgb.resize(std::size_t(n) * 3);
  p.densestX = centre[densest][0];
  p.densestY = centre[densest][1];
  std::discrete_distribution<int> pick(weight, weight + kClusters);
  for (std::int64_t i = 0; i < n; ++i) {
    const bool noise = i % 20 == 0;
    const int c = pick(rng);
    float* x = &p.positions[std::size_t(i) * std::size_t(dim)];
    for (int k = 0; k < dim; ++k)
      x[k] = noise ? 14.0f * uniform(rng) : centre[c][k] + spread[c] * normal(rng);
    const QColor colour = noise ? ui::missingColor() : ui::labelColor(c);
    p.rgb[std::size_t(3 * i)] = std::uint8_t(colour.red());
    p.rgb[std::size_t(3 * i + 1)] = std::uint8_t(colour.green());
    p.rgb[std::size_t(3 * i + 2)] = std::uint8_t(colour.blue());
  }
  return p;
}

double msSince(const QElapsedTimer& t) {
  return double(t.nsecsElapsed()) / 1e6;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::size_t(q * double(v.size() - 1) + 0.5)];
}

/// A frame drawn and read back, in ms.
double timedFrame(MapView& map) {
  QElapsedTimer t;
  t.start();
  const QImage image = map.grabFramebuffer();
  return image.isNull() ? -1 : msSince(t);
}

const char* modeName(const MapView::Frame& f) {
  return f.density ? "density" : "points";
}

/// Still frames, a drag of `frames` steps, then the wait for the full set; one printed row.
void measureView(QApplication& app, MapView& map, const char* view, int frames,
                 const QString& picture) {
  std::vector<double> still;
  for (int k = 0; k < 3; ++k)
    still.push_back(timedFrame(map));
  const MapView::Frame full = map.lastFrame();
  if (!picture.isEmpty()) // synthetic points: no file read that it could replace
    ui::writeOutput(picture, {}, ui::pngBytes(picture, map.grabFramebuffer()));

  const QPoint start(map.width() / 2 - 3 * frames, map.height() / 2);
  QMouseEvent press(QEvent::MouseButtonPress, QPointF(start), map.mapToGlobal(QPointF(start)),
                    Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&map, &press);
  std::vector<double> moving;
  MapView::Frame during;
  QPoint at = start;
  for (int k = 0; k < frames; ++k) {
    at += QPoint(6, k % 2 ? 2 : -2);
    QElapsedTimer t;
    t.start();
    QMouseEvent move(QEvent::MouseMove, QPointF(at), map.mapToGlobal(QPointF(at)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&map, &move);
    const QImage image = map.grabFramebuffer();
    moving.push_back(msSince(t));
    during = map.lastFrame();
  }
  QMouseEvent release(QEvent::MouseButtonRelease, QPointF(at), map.mapToGlobal(QPointF(at)),
                      Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(&map, &release);

  // From the drag's end to a finished frame of every point (the settle timer, then a paint).
  QElapsedTimer sinceStop;
  sinceStop.start();
  double toFull = 0;
  if (during.sampled) {
    bool done = false;
    const auto connection = QObject::connect(&map, &MapView::frameDrawn, &map, [&] {
      if (map.lastFrame().sampled)
        return;
      map.makeCurrent();
      map.context()->functions()->glFinish();
      toFull = msSince(sinceStop);
      done = true;
    });
    while (!done && sinceStop.elapsed() < 20000)
      app.processEvents(QEventLoop::WaitForMoreEvents, 5);
    QObject::disconnect(connection);
    if (!done)
      toFull = -1;
  }
  std::printf("| %s | %s | %.0f | %.1f | %.1f / %.1f / %.1f | %s, %lld points | %.0f |\n", view,
              modeName(full), full.crowding, quantile(still, 0.5), quantile(moving, 0.5),
              quantile(moving, 0.9), quantile(moving, 1.0), modeName(during),
              static_cast<long long>(during.points), toFull);
  std::fflush(stdout);
}

/// A line of /proc/self/status in GB ("RssAnon", "RssFile", "VmHWM").
double statusGb(const char* field) {
  QFile status(QStringLiteral("/proc/self/status"));
  if (!status.open(QIODevice::ReadOnly))
    return -1;
  for (const QByteArray& line : status.readAll().split('\n'))
    if (line.startsWith(field))
      return line.mid(int(std::strlen(field)) + 1).trimmed().split(' ').value(0).toDouble() / 1e6;
  return -1;
}

/// --open: the explorer on a file.
int openInExplorer(QApplication& app, const QString& file, double waitSeconds, int frames,
                   MapView::DensityMode mode, const QString& pictures) {
  ui::MainWindow window;
  window.setDensityMode(mode);
  window.resize(1400, 900);
  window.show();
  bool shown = false, failed = false;
  QObject::connect(&window, &ui::MainWindow::mapShown, [&] { shown = true; });
  QObject::connect(&window, &ui::MainWindow::loadFailed, [&] { failed = true; });
  QElapsedTimer clock;
  clock.start();
  window.openPath(file);
  while (!shown && !failed)
    app.processEvents(QEventLoop::WaitForMoreEvents, 50);
  if (failed) {
    std::fprintf(stderr, "nearscape-bench-render: %s\n", qPrintable(window.lastError()));
    return 1;
  }
  MapView& map = *window.mapView();
  map.grabFramebuffer();
  std::printf("%s: %lld × %lld, map on screen after %.1f s; memory then: anonymous %.2f GB, file "
              "pages %.2f GB\n",
              qPrintable(file), static_cast<long long>(window.dataset()->size()),
              static_cast<long long>(window.dataset()->dim()), clock.elapsed() / 1e3,
              statusGb("RssAnon:"), statusGb("RssFile:"));
  if (!pictures.isEmpty()) {
    const QString picture = pictures + "-open.png";
    ui::writeOutput(picture, window.inputFiles(), ui::pngBytes(picture, window.grab().toImage()));
  }
  std::printf("| points | view | mode at rest | crowding | still frame | moving frame median / p90 "
              "/ max | drawn while moving | full quality after the drag |\n|---|---|---|---|---|"
              "---|---|---|\n");
  measureView(app, map,
              (QString::number(window.dataset()->size()).toStdString() + " | PCA map").c_str(),
              frames, QString());
  double peak = statusGb("RssAnon:");
  QElapsedTimer waited;
  waited.start();
  while (waited.elapsed() < waitSeconds * 1e3 && !window.explorationReady()) {
    app.processEvents(QEventLoop::WaitForMoreEvents, 200);
    peak = std::max(peak, statusGb("RssAnon:"));
  }
  std::printf("after %.0f s more (%s): anonymous memory at most %.2f GB, now %.2f GB; peak "
              "resident %.2f GB\n",
              waited.elapsed() / 1e3, window.explorationReady() ? "explored" : "still exploring",
              peak, statusGb("RssAnon:"), statusGb("VmHWM:"));
  std::fflush(stdout);
  std::_Exit(0); // the exploration may still run: no need to wait for it to stop
}

} // namespace

int main(int argc, char** argv) {
  ui::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  std::vector<std::int64_t> counts = {100000, 1000000, 10000000};
  int width = 1280, height = 800, frames = 30, dim = 2;
  MapView::DensityMode mode = MapView::DensityMode::Auto;
  QString pictures, open;
  double wait = 0;
  const QStringList args = app.arguments();
  for (int i = 1; i < args.size(); ++i) {
    const QString value = i + 1 < args.size() ? args[i + 1] : QString();
    if (args[i] == "--counts") {
      counts.clear();
      for (const QString& c : value.split(','))
        counts.push_back(c.toLongLong());
      ++i;
    } else if (args[i] == "--size") {
      width = value.section('x', 0, 0).toInt();
      height = value.section('x', 1, 1).toInt();
      ++i;
    } else if (args[i] == "--frames") {
      frames = value.toInt();
      ++i;
    } else if (args[i] == "--density") {
      mode = value == "on"    ? MapView::DensityMode::On
             : value == "off" ? MapView::DensityMode::Off
                              : MapView::DensityMode::Auto;
      ++i;
    } else if (args[i] == "--open") {
      open = value;
      ++i;
    } else if (args[i] == "--wait") {
      wait = value.toDouble();
      ++i;
    } else if (args[i] == "--pictures") {
      pictures = value;
      ++i;
    } else if (args[i] == "--3d") {
      dim = 3;
    } else {
      std::fprintf(stderr,
                   "usage: nearscape-bench-render [--counts N,N,…] [--size WxH] [--frames F] "
                   "[--density auto|on|off] [--3d] [--pictures PREFIX] [--open FILE [--wait S]]\n");
      return 2;
    }
  }

  if (!open.isEmpty())
    return openInExplorer(app, open, wait, frames, mode, pictures);
  MapView map;
  map.setDensityMode(mode);
  map.resize(width, height);
  map.show();
  while (!map.isVisible() || map.grabFramebuffer().isNull())
    app.processEvents();
  const char* modeText = mode == MapView::DensityMode::On    ? "on"
                         : mode == MapView::DensityMode::Off ? "off"
                                                             : "auto";
  std::printf("map %d x %d, %dD, density %s, %d-frame drags; times in ms, each frame read back\n",
              width, height, dim, modeText, frames);
  std::printf("| points | view | mode at rest | crowding | still frame | moving frame median / p90 "
              "/ max | drawn while moving | full quality after the drag "
              "|\n|---|---|---|---|---|---|---|---|\n");
  for (const std::int64_t n : counts) {
    QElapsedTimer t;
    t.start();
    const Points p = clustered(n, dim, 42);
    const double made = msSince(t);
    t.restart();
    map.setPoints(p.positions, dim, p.rgb);
    const double loaded = msSince(t);
    const double first = timedFrame(map);
    std::fprintf(
        stderr, "%lld points: made in %.0f ms, handed to the map in %.0f ms, first frame %.0f ms\n",
        static_cast<long long>(n), made, loaded, first);
    char label[64];
    std::snprintf(label, sizeof label, "%lld", static_cast<long long>(n));
    auto picture = [&](const char* view) {
      return pictures.isEmpty() ? QString()
                                : QStringLiteral("%1-%2-%3.png").arg(pictures).arg(n).arg(view);
    };
    measureView(app, map, (std::string(label) + " | whole map").c_str(), frames, picture("whole"));
    // Zoomed in 16× on the densest cluster: the points spread apart.
    map.resetCamera();
    MapView::Camera camera = map.camera();
    const double dx = p.densestX - camera.focal[0], dy = p.densestY - camera.focal[1];
    for (auto* v : {&camera.focal, &camera.position}) {
      (*v)[0] += dx;
      (*v)[1] += dy;
    }
    camera.scale /= 16;
    map.setCamera(camera);
    measureView(app, map, (std::string(label) + " | zoomed 16×").c_str(), frames,
                picture("zoomed"));
    map.resetCamera();
  }
  return 0;
}

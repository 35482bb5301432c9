// nearscape-bench-thumbnails: how long the explorer takes to load N thumbnails from image files
// (the metadata's image column), and whether its event loop stays responsive meanwhile — the
// longest gap between ticks of a 10 ms timer on the GUI thread (what a person feels as a stall
// while panning the map). Writes N JPEG files of SIZE × SIZE pixels first (not timed).
//   nearscape-bench-thumbnails [--count 10000] [--size 512] [--dir DIR]
#include "Thumbnailer.h"

#include "nearscape/core/Dataset.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

using namespace nearscape;

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM",
          qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
  QApplication app(argc, argv);
  int count = 10000, size = 512;
  QString folder;
  const QStringList args = app.arguments();
  for (int i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == "--count")
      count = args[i + 1].toInt();
    else if (args[i] == "--size")
      size = args[i + 1].toInt();
    else if (args[i] == "--dir")
      folder = args[i + 1];
  }
  QTemporaryDir temporary;
  if (folder.isEmpty())
    folder = temporary.path();
  QDir().mkpath(folder);

  // Photos stand-ins: smooth gradients with noise, so that JPEG has real work to do.
  std::mt19937 rng(7);
  Metadata metadata;
  metadata.columnNames = {"label", "image"}; // one column alone would be labels
  metadata.columns.resize(2);
  QElapsedTimer writing;
  writing.start();
  for (int i = 0; i < count; ++i) {
    const QString name = QStringLiteral("%1.jpg").arg(i);
    metadata.columns[0].push_back(i % 2 ? "odd" : "even");
    metadata.columns[1].push_back(name.toStdString());
    const QString path = folder + "/" + name;
    if (QFileInfo::exists(path))
      continue;
    QImage image(size, size, QImage::Format_RGB32);
    const int hue = int(rng() % 360);
    for (int y = 0; y < size; ++y) {
      QRgb* line = reinterpret_cast<QRgb*>(image.scanLine(y));
      for (int x = 0; x < size; ++x)
        line[x] = QColor::fromHsv((hue + x * 60 / size) % 360, 120 + y * 100 / size,
                                  150 + int(rng() % 80))
                      .rgb();
    }
    image.save(path, "JPG", 85);
  }
  const double writeSeconds = writing.elapsed() / 1e3;

  auto dataset = std::make_shared<Dataset>();
  std::vector<float> zeros(std::size_t(count) * 2, 0.0f);
  dataset->vectors = Matrix<float>(std::move(zeros), count, 2);
  attachMetadata(*dataset, std::move(metadata), (folder + "/meta.tsv").toStdString());

  ui::Thumbnailer thumbnailer;
  thumbnailer.setDataset(dataset);
  if (!thumbnailer.available()) {
    std::fprintf(stderr, "nearscape-bench-thumbnails: the data has no image column\n");
    return 1;
  }
  QElapsedTimer clock, sinceTick;
  std::vector<double> gaps;
  QTimer tick;
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, [&] {
    gaps.push_back(sinceTick.nsecsElapsed() / 1e6);
    sinceTick.restart();
  });
  QObject::connect(&thumbnailer, &ui::Thumbnailer::countsChanged, [&](int loaded, int failed) {
    if (loaded + failed == count)
      app.quit();
  });
  clock.start();
  sinceTick.start();
  tick.start();
  for (int i = 0; i < count; ++i) // as a grid of every item would ask
    thumbnailer.thumbnail(i);
  const double queueSeconds = clock.elapsed() / 1e3;
  app.exec();
  const double seconds = clock.elapsed() / 1e3;
  std::sort(gaps.begin(), gaps.end());
  const double p99 = gaps.empty() ? 0 : gaps[std::size_t(0.99 * double(gaps.size() - 1))];
  std::printf("thumbnails: %d JPEG files of %d x %d (written in %.1f s) in %s\n", count, size, size,
              writeSeconds, qPrintable(folder));
  std::printf("loaded %d, failed %d in %.2f s (%.0f images/s; requests queued in %.3f s) on %d "
              "threads\n",
              thumbnailer.loaded(), thumbnailer.failed(), seconds, count / seconds, queueSeconds,
              QThreadPool::globalInstance()->maxThreadCount());
  std::printf("GUI event loop meanwhile: 10 ms ticks, p99 gap %.1f ms, longest gap %.1f ms\n", p99,
              gaps.empty() ? 0.0 : gaps.back());
  return thumbnailer.failed() == 0 ? 0 : 1;
}

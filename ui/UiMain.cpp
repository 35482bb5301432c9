#include "UiMain.h"

#include "ComparePanel.h"
#include "Export.h"
#include "MainWindow.h"
#include "MapView.h"
#include "OpenGlCheck.h"
#include "Preferences.h"
#include "Session.h"
#include "StudyChart.h"
#include "nearscape/core/Error.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QScreen>
#include <QSurfaceFormat>
#include <QTimer>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace nearscape::ui {

void setDefaultSurfaceFormat() {
  QSurfaceFormat format;
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
  format.setRedBufferSize(8);
  format.setGreenBufferSize(8);
  format.setBlueBufferSize(8);
  format.setAlphaBufferSize(8);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(0);
  format.setSamples(0);
  QSurfaceFormat::setDefaultFormat(format);
}

namespace {

/// Takes `--session FILE` (or `--session=FILE`) out of the arguments before QApplication sees
/// them: Qt claims `-session` for X session management and would swallow it.
std::string takeSessionArgument(int& argc, char** argv) {
  std::string file;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--session" || arg == "-session") && i + 1 < argc) {
      file = argv[++i];
      continue;
    }
    if (arg.rfind("--session=", 0) == 0) {
      file = arg.substr(10);
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return file;
}

/// Whether the arguments only ask for --help or --version, or for a picture of a study
/// (--sweep-plot): answered without a display.
bool needsNoDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "--help-all" || arg == "--version" ||
        arg == "-v" || arg == "--sweep-plot" || arg.rfind("--sweep-plot=", 0) == 0)
      return true;
  }
  return false;
}

/// `nearscape --sweep-plot OUT.png STUDY.csv`: the trade-off studio's picture of a study that
/// `nearscape-cli sweep --out` wrote, drawn without a window. Exit 0, 2 (bad input), 1 (write).
int plotStudy(const QString& csvPath, const QString& pngPath) {
  try {
    checkOutput(pngPath, inputsOf(csvPath)); // before the reading: never over the study
    const SweepStudy study = readSweepStudyCsv(csvPath.toStdString());
    if (study.runs.empty())
      throw FormatError(csvPath.toStdString() + ": no rows to plot");
    const QImage image = renderStudyFigure(
        study, {}, QSize(1600, 760),
        QStringLiteral("k = %1 · %2").arg(study.k).arg(QFileInfo(csvPath).fileName()));
    exportStudyPicture(pngPath, csvPath.toStdString(), image);
  } catch (const WriteError& e) {
    std::fprintf(stderr, "nearscape: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nearscape: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "nearscape: saved %s\n", qPrintable(pngPath));
  return 0;
}

/// `--screenshot PNG`: the window's picture written through the engine's output set (never over
/// one of `inputs`, atomically, the old picture kept on failure); without a window, only the
/// check of the name. Returns the exit status: 0, 2 (it names an input), 1 (the write failed).
int saveScreenshot(const QString& png, const QStringList& inputs, MainWindow* window) {
  try {
    if (!window) {
      checkOutput(png, inputs);
      return 0;
    }
    writeOutput(png, inputs, pngBytes(png, window->grab().toImage()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nearscape: could not save %s: %s\n", qPrintable(png), e.what());
    return dynamic_cast<const InvalidArgument*>(&e) ? 2 : 1;
  }
  // The map's item count beside the picture: what a script (nearscape.show's test) checks.
  std::fprintf(stderr, "nearscape: saved %s (%lld items on the map)\n", qPrintable(png),
               static_cast<long long>(window->mapView()->pointCount()));
  return 0;
}

} // namespace

int runGui(int argc, char** argv) {
  const QString sessionFile = QString::fromStdString(takeSessionArgument(argc, argv));
  // Help and version need no window: without this, a terminal with no display (ssh, a server)
  // would abort in QApplication before the text is printed.
  const bool windowless = needsNoDisplay(argc, argv);
  if (windowless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  if (const QString missing = windowless ? QString() : missingOpenGl(); !missing.isEmpty()) {
    std::fprintf(stderr, "nearscape: %s\n", qPrintable(missing)); // the map would crash
    return 1;
  }
  QApplication::setOrganizationName(QStringLiteral("Nearscape")); // QSettings: ~/.config/Nearscape/
  QApplication::setApplicationName(QStringLiteral("Nearscape"));
  QApplication::setApplicationVersion(QString::fromLatin1(engineVersion()));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Desktop explorer for embeddings"));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("path"),
                               QStringLiteral("Embeddings file or IDX folder (default: "
                                              "Fashion-MNIST)"));
  QCommandLineOption meta(QStringLiteral("meta"), QStringLiteral("Metadata TSV"),
                          QStringLiteral("file"));
  QCommandLineOption backend(QStringLiteral("backend"), QStringLiteral("auto, cpu or cuda"),
                             QStringLiteral("backend"), QStringLiteral("auto"));
  QCommandLineOption devices(QStringLiteral("devices"),
                             QStringLiteral("GPUs the work is split over: all, or ordinals such "
                                            "as 0,1 (default: the preference, else the first)"),
                             QStringLiteral("list"));
  QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                QStringLiteral("Save the window to this PNG once the map is "
                                               "refined, then quit"),
                                QStringLiteral("png"));
  QCommandLineOption select(QStringLiteral("select"),
                            QStringLiteral("Select this item once the graph is built"),
                            QStringLiteral("item"));
  QCommandLineOption pathTo(QStringLiteral("path-to"),
                            QStringLiteral("Then show the smoothest path to this item"),
                            QStringLiteral("item"));
  QCommandLineOption map3D(QStringLiteral("3d"), QStringLiteral("Start with the 3D map"));
  QCommandLineOption metric(QStringLiteral("metric"),
                            QStringLiteral("l2, cos or ip, over the file's own (default: the "
                                           "file's, else l2)"),
                            QStringLiteral("metric"));
  QCommandLineOption colourBy(QStringList{QStringLiteral("color-by"), QStringLiteral("colour-by")},
                              QStringLiteral("Colour the map by this column (label, a metadata "
                                             "column, or a computed one)"),
                              QStringLiteral("column"));
  QCommandLineOption search(QStringLiteral("search"),
                            QStringLiteral("Find these items (an id or text); the rest are dimmed"),
                            QStringLiteral("text"));
  QCommandLineOption showRange(QStringLiteral("show-range"),
                               QStringLiteral("With a numeric --color-by: show only items whose "
                                              "value lies in FROM..TO"),
                               QStringLiteral("from..to"));
  QCommandLineOption opacityBy(QStringLiteral("opacity-by"),
                               QStringLiteral("Fade items by this numeric column (largest opaque)"),
                               QStringLiteral("column"));
  QCommandLineOption sizeBy(QStringLiteral("size-by"),
                            QStringLiteral("Draw items larger by this numeric column"),
                            QStringLiteral("column"));
  QCommandLineOption sweepPlot(QStringLiteral("sweep-plot"),
                               QStringLiteral("Draw the trade-off studio's picture of the study "
                                              "in the CSV given as path (nearscape-cli sweep "
                                              "--out) to this PNG, without a window, then quit"),
                               QStringLiteral("png"));
  QCommandLineOption density(QStringLiteral("density"),
                             QStringLiteral("How crowded points are drawn: auto (a density image "
                                            "where points crowd the pixels), on, or off (single "
                                            "points)"),
                             QStringLiteral("mode"), QStringLiteral("auto"));
  QCommandLineOption session(QStringLiteral("session"),
                             QStringLiteral("Open this session (.nearscape): its data and view"),
                             QStringLiteral("file"));
  QCommandLineOption compare(QStringLiteral("compare"),
                             QStringLiteral("Compare with a second embedding of the same items "
                                            "and show both maps side by side"),
                             QStringLiteral("file"));
  parser.addOptions({meta, backend, devices, screenshot, select, pathTo, map3D, metric, colourBy,
                     search, showRange, opacityBy, sizeBy, density, session, compare, sweepPlot});
  parser.process(app);
  if (parser.isSet(sweepPlot)) {
    if (parser.positionalArguments().size() != 1) {
      std::fprintf(stderr, "nearscape: --sweep-plot OUT.png takes one study CSV (nearscape-cli "
                           "sweep --out STUDY.csv)\n");
      return 2;
    }
    return plotStudy(parser.positionalArguments().front(), parser.value(sweepPlot));
  }

  Context context;
  context.backend = Preferences::load().backend; // the command line's, when given, wins
  if (parser.isSet(backend)) {
    const auto b = parseBackend(parser.value(backend).toStdString());
    if (!b) {
      std::fprintf(stderr, "nearscape: unknown backend '%s' (auto, cpu or cuda)\n",
                   qPrintable(parser.value(backend)));
      return 2;
    }
    context.backend = *b;
  }
  try {
    applyDevices(context,
                 parser.isSet(devices) ? parser.value(devices) : Preferences::load().devices);
  } catch (const std::exception& e) {
    if (parser.isSet(devices)) {
      std::fprintf(stderr, "nearscape: %s\n", e.what());
      return 2;
    }
    applyDevices(context, QString()); // a stored list this machine cannot serve: the first GPU
  }
  MainWindow window(context);
  if (parser.isSet(metric)) {
    const auto chosen = parseMetric(parser.value(metric).toStdString());
    if (!chosen) {
      std::fprintf(stderr, "nearscape: unknown metric '%s' (l2, cos or ip)\n",
                   qPrintable(parser.value(metric)));
      return 2;
    }
    window.forceMetric(*chosen);
  }
  if (parser.isSet(map3D))
    window.setMapDimension(3);
  if (parser.isSet(density)) {
    const QString mode = parser.value(density);
    if (mode != QLatin1String("auto") && mode != QLatin1String("on") &&
        mode != QLatin1String("off")) {
      std::fprintf(stderr, "nearscape: unknown density mode '%s' (auto, on or off)\n",
                   qPrintable(mode));
      return 2;
    }
    window.setDensityMode(mode == QLatin1String("on")    ? MapView::DensityMode::On
                          : mode == QLatin1String("off") ? MapView::DensityMode::Off
                                                         : MapView::DensityMode::Auto);
  }
  window.show();

  QString path = parser.positionalArguments().value(0);
  if (path.isEmpty())
    path = QString::fromStdString(defaultDatasetPath().string());
  const QString shot = parser.value(screenshot);
  std::optional<std::pair<double, double>> range;
  if (parser.isSet(showRange)) {
    const QStringList ends = parser.value(showRange).split(QStringLiteral(".."));
    bool okFrom = false, okTo = false;
    if (ends.size() == 2)
      range = std::pair{ends[0].toDouble(&okFrom), ends[1].toDouble(&okTo)};
    if (!okFrom || !okTo || !(range->first <= range->second) || !parser.isSet(colourBy)) {
      std::fprintf(stderr,
                   "nearscape: --show-range takes FROM..TO (FROM ≤ TO) with a numeric "
                   "--color-by, got '%s'\n",
                   qPrintable(parser.value(showRange)));
      return 2;
    }
  }
  if (parser.isSet(opacityBy)) {
    const QString column = parser.value(opacityBy);
    QObject::connect(&window, &MainWindow::explorationFinished, &window, [&window, column] {
      if (!window.setOpacityBy(column)) {
        std::fprintf(stderr, "nearscape: no numeric column '%s' for opacity (choices: %s)\n",
                     qPrintable(column), qPrintable(window.opacityChoices().join(", ")));
        QApplication::exit(2);
      }
    });
  }
  if (parser.isSet(sizeBy)) {
    const QString column = parser.value(sizeBy);
    QObject::connect(&window, &MainWindow::explorationFinished, &window, [&window, column] {
      if (!window.setSizeBy(column)) {
        std::fprintf(stderr, "nearscape: no numeric column '%s' for size (choices: %s)\n",
                     qPrintable(column), qPrintable(window.opacityChoices().join(", ")));
        QApplication::exit(2);
      }
    });
  }
  if (parser.isSet(colourBy) || parser.isSet(search)) {
    // Applied once the graph exists, so that computed columns can be chosen too.
    const QString column = parser.value(colourBy), text = parser.value(search);
    QObject::connect(
        &window, &MainWindow::explorationFinished, &window, [&window, column, text, range] {
          if (!column.isEmpty() && !window.setColourBy(column)) {
            std::fprintf(stderr, "nearscape: no column '%s' to colour by (choices: %s)\n",
                         qPrintable(column), qPrintable(window.colourChoices().join(", ")));
            QApplication::exit(2);
            return;
          }
          if (range && !window.setShownRange(range->first, range->second)) {
            std::fprintf(stderr, "nearscape: --show-range needs a numeric colouring; '%s' is not\n",
                         qPrintable(column));
            QApplication::exit(2);
            return;
          }
          if (!text.isEmpty())
            window.setSearch(text);
        });
  }
  if (parser.isSet(compare)) {
    const QString other = parser.value(compare);
    QObject::connect(
        &window, &MainWindow::explorationFinished, &window,
        [&window, other] { window.comparePanel()->compareWith(other); }, Qt::SingleShotConnection);
    QObject::connect(window.comparePanel(), &ComparePanel::failed, &window,
                     [](const QString& message) {
                       std::fprintf(stderr, "nearscape: %s\n", qPrintable(message));
                       QApplication::exit(2);
                     });
  }
  if (parser.isSet(select)) {
    const qint64 a = parser.value(select).toLongLong(), b = parser.value(pathTo).toLongLong();
    const bool withPath = parser.isSet(pathTo);
    QObject::connect(&window, &MainWindow::explorationFinished, &window, [&window, a, b, withPath] {
      const qint64 n = window.dataset() ? window.dataset()->size() : 0;
      for (const qint64 item : withPath ? std::vector<qint64>{a, b} : std::vector<qint64>{a})
        if (item < 0 || item >= n) {
          std::fprintf(stderr,
                       "nearscape: item %lld is out of range: the data has %lld items "
                       "(0 … %lld)\n",
                       static_cast<long long>(item), static_cast<long long>(n),
                       static_cast<long long>(n - 1));
          QApplication::exit(2);
          return;
        }
      window.selectItem(a);
      if (withPath)
        window.showPathTo(b);
    });
  }
  if (!shot.isEmpty()) {
    // Refused before any work when it names a file this run reads.
    QStringList inputs = inputsOf(path);
    for (const QString& file : {parser.value(meta), sessionFile, parser.value(compare)})
      if (!file.isEmpty())
        inputs << file;
    if (!sessionFile.isEmpty()) {
      try { // the data a session names (an unreadable session is reported below)
        const Session s = Session::read(sessionFile);
        inputs << inputsOf(s.data) << s.metadata;
      } catch (const std::exception&) {
      }
    }
    if (const int code = saveScreenshot(shot, inputs, nullptr); code != 0)
      return code;
    // The screenshot waits for the refined map (or the PCA map when there is nothing to refine),
    // then for a search or a column still read in the background.
    QObject::connect(&window, &MainWindow::explorationFinished, &window, [&window, shot] {
      auto* settled = new QTimer(&window);
      settled->setInterval(300);
      QObject::connect(settled, &QTimer::timeout, &window, [&window, shot, settled] {
        if (window.viewPending())
          return;
        settled->stop();
        QApplication::exit(saveScreenshot(shot, window.inputFiles(), &window));
      });
      settled->start();
    });
    QObject::connect(&window, &MainWindow::loadFailed, &window, [](const QString& message) {
      std::fprintf(stderr, "nearscape: %s\n", qPrintable(message)); // no dialog to read
      QApplication::exit(2);
    });
  }
  if (!sessionFile.isEmpty()) {
    // A session file that cannot be read is an error of the command line: say so and stop.
    try {
      (void)Session::read(sessionFile);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nearscape: %s\n", e.what());
      return 2;
    }
    QObject::connect(&window, &MainWindow::loadFailed, &window, [](const QString& message) {
      std::fprintf(stderr, "nearscape: %s\n", qPrintable(message));
      QApplication::exit(2); // a session of other data
    });
    window.openSession(sessionFile);
  } else if (QFileInfo::exists(path) || !parser.positionalArguments().isEmpty()) {
    window.openPath(path, parser.value(meta));
  }
  return app.exec();
}

} // namespace nearscape::ui

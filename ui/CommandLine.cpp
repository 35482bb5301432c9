#include "CommandLine.h"

#include "ClusterLabelsControl.h"
#include "ComparePanel.h"
#include "Export.h"
#include "FacetsPanel.h"
#include "MainWindow.h"
#include "Preferences.h"
#include "Session.h"
#include "StudyChart.h"
#include "nearscape/core/Error.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <functional>
#include <vector>

namespace nearscape::ui {
namespace {

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

/// Says `message` on stderr and gives the command line's exit status.
int refuse(const QString& message) {
  std::fprintf(stderr, "nearscape: %s\n", qPrintable(message));
  return 2;
}

/// Runs `then` each time the window's graph exists.
void onceExplored(MainWindow& window, std::function<void()> then) {
  QObject::connect(&window, &MainWindow::explorationFinished, &window, std::move(then));
}

} // namespace

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

bool needsNoDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "--help-all" || arg == "--version" ||
        arg == "-v" || arg == "--sweep-plot" || arg.rfind("--sweep-plot=", 0) == 0)
      return true;
  }
  return false;
}

QStringList CommandLine::inputs() const {
  QStringList files = inputsOf(path);
  for (const QString& file : {meta, session, compare})
    if (!file.isEmpty())
      files << file;
  if (!session.isEmpty()) {
    try { // the data a session names (an unreadable session is reported on its own)
      const Session s = Session::read(session);
      files << inputsOf(s.data) << s.metadata;
    } catch (const std::exception&) {
    }
  }
  return files;
}

std::variant<CommandLine, int> parseCommandLine(const QApplication& app, const QString& session) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Desktop explorer for embeddings"));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("path"),
                               QStringLiteral("Embeddings file or IDX folder (default: "
                                              "Fashion-MNIST)"));
  auto option = [&parser](QStringList names, const char* help, const char* value = nullptr,
                          const char* fallback = nullptr) {
    QCommandLineOption o(names, QString::fromUtf8(help),
                         value ? QString::fromLatin1(value) : QString(),
                         fallback ? QString::fromLatin1(fallback) : QString());
    parser.addOption(o);
    return o;
  };
  const auto meta = option({"meta"}, "Metadata TSV", "file");
  const auto backend = option({"backend"}, "auto, cpu or cuda", "backend", "auto");
  const auto devices = option({"devices"},
                              "GPUs the work is split over: all, or ordinals such as 0,1 "
                              "(default: the preference, else the first)",
                              "list");
  const auto screenshot = option(
      {"screenshot"}, "Save the window to this PNG once the map is refined, then quit", "png");
  const auto select = option({"select"}, "Select this item once the graph is built", "item");
  const auto pathTo = option({"path-to"}, "Then show the smoothest path to this item", "item");
  const auto map3D = option({"3d"}, "Start with the 3D map");
  const auto clusterLabels =
      option({"cluster-labels"}, "Label the map's regions by their most distinctive words");
  const auto labelColumn = option(
      {"label-column"}, "With --cluster-labels: the text column (default: the data's)", "column");
  const auto metric = option(
      {"metric"}, "l2, cos or ip, over the file's own (default: the file's, else l2)", "metric");
  const auto colourBy = option({"color-by", "colour-by"},
                               "Colour the map by this column (label, a metadata column, or a "
                               "computed one)",
                               "column");
  const auto colourScale = option({"color-scale", "colour-scale"},
                                  "How a numeric colouring maps values to colours: auto (log or "
                                  "quantile for skewed values), linear, log or quantile",
                                  "scale");
  const auto facetFilter = option({"filter"},
                                  "Dim the items outside a facet filter: COLUMN=VALUE, "
                                  "COLUMN=A|B or COLUMN=FROM..TO (repeatable: all must hold)",
                                  "facet");
  const auto search =
      option({"search"}, "Find these items (an id or text); the rest are dimmed", "text");
  const auto showRange =
      option({"show-range"},
             "With a numeric --color-by: show only items whose value lies in FROM..TO", "from..to");
  const auto opacityBy =
      option({"opacity-by"}, "Fade items by this numeric column (largest opaque)", "column");
  const auto sizeBy = option({"size-by"}, "Draw items larger by this numeric column", "column");
  const auto titleColumn = option({"title-column"},
                                  "Name items by this metadata column beside #id (\"\": none; "
                                  "default: a column named title, name, package, id…, else a "
                                  "string column of short, mostly unique values)",
                                  "column");
  const auto density = option({"density"},
                              "How crowded points are drawn: auto (a density image where points "
                              "crowd the pixels), on, or off (single points)",
                              "mode", "auto");
  option({"session"}, "Open this session (.nearscape): its data and view", "file");
  const auto compare = option({"compare"},
                              "Compare with a second embedding of the same items and show both "
                              "maps side by side",
                              "file");
  const auto sweepPlot = option({"sweep-plot"},
                                "Draw the trade-off studio's picture of the study in the CSV "
                                "given as path (nearscape-cli sweep --out) to this PNG, without "
                                "a window, then quit",
                                "png");
  parser.process(app);
  if (parser.isSet(sweepPlot)) {
    if (parser.positionalArguments().size() != 1)
      return refuse(QStringLiteral("--sweep-plot OUT.png takes one study CSV (nearscape-cli "
                                   "sweep --out STUDY.csv)"));
    return plotStudy(parser.positionalArguments().front(), parser.value(sweepPlot));
  }

  CommandLine line;
  line.session = session;
  line.context.backend = Preferences::load().backend; // the command line's, when given, wins
  if (parser.isSet(backend)) {
    const auto b = parseBackend(parser.value(backend).toStdString());
    if (!b)
      return refuse(
          QStringLiteral("unknown backend '%1' (auto, cpu or cuda)").arg(parser.value(backend)));
    line.context.backend = *b;
  }
  try {
    applyDevices(line.context,
                 parser.isSet(devices) ? parser.value(devices) : Preferences::load().devices);
  } catch (const std::exception& e) {
    if (parser.isSet(devices))
      return refuse(QString::fromUtf8(e.what()));
    applyDevices(line.context, QString()); // a stored list this machine cannot serve: the first
  }
  if (parser.isSet(metric)) {
    line.metric = parseMetric(parser.value(metric).toStdString());
    if (!line.metric)
      return refuse(
          QStringLiteral("unknown metric '%1' (l2, cos or ip)").arg(parser.value(metric)));
  }
  line.map3D = parser.isSet(map3D);
  line.clusterLabels = parser.isSet(clusterLabels) || parser.isSet(labelColumn);
  line.labelColumn = parser.value(labelColumn);
  if (parser.isSet(density)) {
    const QString mode = parser.value(density);
    if (mode != QLatin1String("auto") && mode != QLatin1String("on") &&
        mode != QLatin1String("off"))
      return refuse(QStringLiteral("unknown density mode '%1' (auto, on or off)").arg(mode));
    line.density = mode == QLatin1String("on")    ? MapView::DensityMode::On
                   : mode == QLatin1String("off") ? MapView::DensityMode::Off
                                                  : MapView::DensityMode::Auto;
  }
  line.pathGiven = !parser.positionalArguments().isEmpty();
  line.path = parser.positionalArguments().value(0);
  if (line.path.isEmpty())
    line.path = QString::fromStdString(defaultDatasetPath().string());
  line.meta = parser.value(meta);
  line.screenshot = parser.value(screenshot);
  line.compare = parser.value(compare);
  line.colourBy = parser.value(colourBy);
  line.search = parser.value(search);
  for (const QString& text : parser.values(facetFilter)) {
    try {
      line.facets.push_back(parseFacetBrush(text.toStdString()));
    } catch (const std::exception& e) {
      return refuse(QString::fromUtf8(e.what()));
    }
  }
  if (parser.isSet(colourScale)) {
    line.colourScale = parseColourScale(parser.value(colourScale).toStdString());
    if (!line.colourScale)
      return refuse(QStringLiteral("unknown colour scale '%1' (auto, linear, log or quantile)")
                        .arg(parser.value(colourScale)));
  }
  line.opacityBy = parser.value(opacityBy);
  line.sizeBy = parser.value(sizeBy);
  if (parser.isSet(titleColumn))
    line.titleColumn = parser.value(titleColumn);
  if (parser.isSet(showRange)) {
    const QStringList ends = parser.value(showRange).split(QStringLiteral(".."));
    bool okFrom = false, okTo = false;
    if (ends.size() == 2)
      line.shownRange = std::pair{ends[0].toDouble(&okFrom), ends[1].toDouble(&okTo)};
    if (!okFrom || !okTo || !(line.shownRange->first <= line.shownRange->second) ||
        !parser.isSet(colourBy))
      return refuse(QStringLiteral("--show-range takes FROM..TO (FROM ≤ TO) with a numeric "
                                   "--color-by, got '%1'")
                        .arg(parser.value(showRange)));
  }
  if (parser.isSet(select))
    line.select = parser.value(select).toLongLong();
  if (parser.isSet(pathTo))
    line.pathTo = parser.value(pathTo).toLongLong();
  return line;
}

std::optional<int> applyCommandLine(const CommandLine& line, MainWindow& window) {
  if (line.metric)
    window.forceMetric(*line.metric);
  if (line.map3D)
    window.setMapDimension(3);
  if (line.density)
    window.setDensityMode(*line.density);
  window.show();
  auto fail = [](const QString& message) { QApplication::exit(refuse(message)); };
  // Applied once the graph exists, so that computed columns can be chosen too.
  for (const auto& [column, set] : {std::pair{line.opacityBy, &MainWindow::setOpacityBy},
                                    std::pair{line.sizeBy, &MainWindow::setSizeBy}}) {
    if (column.isEmpty())
      continue;
    const bool opacity = set == &MainWindow::setOpacityBy;
    // Init-captures: clang before 16 cannot capture structured bindings (the sanitizer builds).
    onceExplored(window, [&window, column = column, set = set, opacity, fail] {
      if (!(window.*set)(column))
        fail(QStringLiteral("no numeric column '%1' for %2 (choices: %3)")
                 .arg(column, opacity ? QStringLiteral("opacity") : QStringLiteral("size"),
                      window.opacityChoices().join(QStringLiteral(", "))));
    });
  }
  if (!line.colourBy.isEmpty() || !line.search.isEmpty() || line.colourScale) {
    onceExplored(window, [&window, line, fail] {
      if (line.colourScale)
        window.session()->setColourScale(*line.colourScale);
      if (!line.colourBy.isEmpty() && !window.setColourBy(line.colourBy))
        return fail(QStringLiteral("no column '%1' to colour by (choices: %2)")
                        .arg(line.colourBy, window.colourChoices().join(QStringLiteral(", "))));
      if (line.shownRange && !window.setShownRange(line.shownRange->first, line.shownRange->second))
        return fail(QStringLiteral("--show-range needs a numeric colouring; '%1' is not")
                        .arg(line.colourBy));
      if (!line.search.isEmpty())
        window.setSearch(line.search);
    });
  }
  if (line.titleColumn) {
    // Needs only the data, and wins over a session's.
    QObject::connect(
        &window, &MainWindow::mapShown, &window,
        [&window, column = *line.titleColumn, fail] {
          if (!window.setTitleColumn(column)) {
            QStringList names;
            for (const std::string& name : window.dataset()->metadata.columnNames)
              names << QString::fromStdString(name);
            fail(QStringLiteral("no metadata column '%1' for --title-column (columns: %2)")
                     .arg(column, names.isEmpty() ? QStringLiteral("none")
                                                  : names.join(QStringLiteral(", "))));
          }
        },
        Qt::SingleShotConnection);
  }
  if (line.clusterLabels) {
    onceExplored(window, [&window, column = line.labelColumn, fail] {
      ClusterLabelsControl* labels = window.clusterLabels();
      const Dataset* data = window.dataset();
      if (!column.isEmpty() && data && data->metadata.findColumn(column.toStdString()) < 0)
        return fail(QStringLiteral("no column '%1' for --label-column").arg(column));
      labels->setColumn(column);
      labels->setShown(true);
    });
  }
  if (!line.facets.empty()) {
    // Brushes on columns the data lacks are an error of the command line: said, and the end.
    if (auto* facets = window.findChild<FacetsPanel*>())
      QObject::connect(facets, &FacetsPanel::failed, &window,
                       [](const QString& message) { QApplication::exit(refuse(message)); });
    onceExplored(window,
                 [&window, brushes = line.facets] { window.session()->setFacets(brushes); });
  }
  if (!line.compare.isEmpty()) {
    QObject::connect(
        &window, &MainWindow::explorationFinished, &window,
        [&window, other = line.compare] { window.compareWith(other); }, Qt::SingleShotConnection);
    QObject::connect(window.comparePanel(), &ComparePanel::failed, &window,
                     [](const QString& message) { QApplication::exit(refuse(message)); });
  }
  if (line.select) {
    onceExplored(window, [&window, a = *line.select, b = line.pathTo, fail] {
      const qint64 n = window.dataset() ? window.dataset()->size() : 0;
      for (const qint64 item : b ? std::vector<qint64>{a, *b} : std::vector<qint64>{a})
        if (item < 0 || item >= n)
          return fail(QStringLiteral("item %1 is out of range: the data has %2 items (0 … %3)")
                          .arg(item)
                          .arg(n)
                          .arg(n - 1));
      window.selectItem(a);
      if (b)
        window.showPathTo(*b);
    });
  }
  if (!line.screenshot.isEmpty()) {
    // Refused before any work when it names a file this run reads.
    if (const int code = saveScreenshot(line.screenshot, line.inputs(), nullptr); code != 0)
      return code;
    // The screenshot waits for the refined map (or the PCA map when there is nothing to refine),
    // then for a search or a column still read in the background.
    onceExplored(window, [&window, shot = line.screenshot] {
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
      QApplication::exit(refuse(message)); // no dialog to read
    });
  }
  if (!line.session.isEmpty()) {
    // A session file that cannot be read is an error of the command line: say so and stop.
    try {
      (void)Session::read(line.session);
    } catch (const std::exception& e) {
      return refuse(QString::fromUtf8(e.what()));
    }
    // Its data missing, moved or changed is no reason to leave: the window says so and offers
    // to locate the file (MissingDataPage); stderr gets the reason too, for a script.
    QObject::connect(&window, &MainWindow::loadFailed, &window, [](const QString& message) {
      std::fprintf(stderr, "nearscape: %s\n", qPrintable(message));
    });
    window.openSession(line.session);
  } else if (QFileInfo::exists(line.path) || line.pathGiven) {
    window.openPath(line.path, line.meta);
  }
  return std::nullopt;
}

} // namespace nearscape::ui

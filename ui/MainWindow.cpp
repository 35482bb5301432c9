#include "MainWindow.h"

#include "ClusterLabelOverlay.h"
#include "ClusterLabelsControl.h"
#include "ColourControls.h"
#include "ComparePanel.h"
#include "DuplicatesPanel.h"
#include "ExplorationJobs.h"
#include "ExplorerSession.h"
#include "Export.h"
#include "FacetsPanel.h"
#include "Finder.h"
#include "HoverCard.h"
#include "ItemInspector.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "MapPair.h"
#include "MissingDataPage.h"
#include "OpenedData.h"
#include "OutliersPanel.h"
#include "SelectionPanel.h"
#include "StatusLine.h"
#include "SweepPanel.h"
#include "Thumbnailer.h"
#include "TradeoffStudio.h"
#include "ViewExports.h"
#include "WelcomePage.h"

#include <QActionGroup>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace nearscape::ui {

MainWindow::MainWindow(Context context, QWidget* parent)
    : QMainWindow(parent), m_context(context), m_session(new ExplorerSession(this)),
      m_hoverCard(new HoverCard(this)), m_thumbnailer(new Thumbnailer(this)),
      m_jobs(new JobRunner(this)), m_status(new StatusLine(statusBar())),
      m_neighbours(new ItemStrip(false, this)), m_pathStrip(new ItemStrip(true, this)),
      m_sweep(new SweepPanel(context, this)), m_duplicates(new DuplicatesPanel(context, this)),
      m_outlierPanel(new OutliersPanel(context, this)), m_compare(new ComparePanel(context, this)) {
  setWindowTitle(tr("Nearscape"));
  setAcceptDrops(true);
  m_errorDisplay = [this](const QString& title, const QString& message) {
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setTextFormat(Qt::PlainText); // messages quote file names and contents: never rich text
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open(); // not exec(): the GUI keeps running
  };
  // The welcome page until data is open, then the maps.
  m_central = new QStackedWidget(this);
  m_welcome = new WelcomePage(m_central);
  m_central->addWidget(m_welcome);
  m_maps = new MapPair(m_central);
  m_central->addWidget(m_maps);
  m_missing = new MissingDataPage(m_central);
  m_central->addWidget(m_missing);
  setCentralWidget(m_central);
  m_chooseFile = [this](const QString& missing) {
    const QFileInfo info(missing);
    return QFileDialog::getOpenFileName(this, tr("Locate %1").arg(info.fileName()),
                                        info.dir().exists() ? info.absolutePath() : QString(),
                                        tr("%1;;All files (*)").arg(info.fileName()));
  };
  connect(m_missing, &MissingDataPage::locateAsked, this, [this] {
    if (!m_unopenedSession)
      return;
    if (const QString chosen = m_chooseFile(m_unopenedSession->data); !chosen.isEmpty())
      locateSessionData(chosen);
  });
  connect(m_missing, &MissingDataPage::dismissed, this, [this] {
    m_unopenedSession.reset();
    m_central->setCurrentWidget(dataset() ? static_cast<QWidget*>(m_maps) : m_welcome);
  });
  // New data reaches the map first: the observers connected after this one colour it.
  connect(m_session, &ExplorerSession::dataChanged, this, &MainWindow::showData);
  connect(m_session, &ExplorerSession::mapDimChanged, this, &MainWindow::onMapDimChanged);
  m_exploration = new ExplorationJobs(m_session, m_maps->map(), this);
  buildExploreBar();
  m_inspector =
      new ItemInspector(m_session, m_maps, m_neighbours, m_pathStrip, m_jobs, /*dialogs*/ this);
  m_exports = new ViewExports(m_session, m_maps->map(), m_inspector, this);
  m_clusterLabels = new ClusterLabelsControl(m_session, m_maps->map(), m_context, this);
  m_exports->addPictureOverlay(m_clusterLabels->overlay());
  connect(m_exports, &ViewExports::written, m_status, &StatusLine::showMessage);
  connect(m_exports, &ViewExports::failed, this, &MainWindow::showError);
  auto* selection = new SelectionPanel(m_session, m_thumbnailer, this);
  auto* facets = new FacetsPanel(m_session, this);
  m_docks = addDocks(*this, {m_colours->key(), m_neighbours, m_pathStrip, m_sweep, m_duplicates,
                             m_outlierPanel, m_compare, selection, facets});
  connect(facets, &FacetsPanel::failed, this,
          [this](const QString& message) { showError(tr("Facets"), message); });
  connect(facets, &FacetsPanel::message, m_status, &StatusLine::showMessage);
  m_pathStrip->setMaximumHeight(150);
  m_neighbours->setToolTip(
      tr("Click an item in the map; Ctrl+click another for the smoothest path"));
  m_studio = new TradeoffStudio(m_sweep, this); // its own window, closed with this one
  connectPanels();
  connect(selection, &SelectionPanel::itemChosen, this, &MainWindow::selectItem);
  connect(selection, &SelectionPanel::message, m_status, &StatusLine::showMessage);
  connect(selection, &SelectionPanel::exportAsked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the selection"), {}, tr("TSV (*.tsv)"));
    if (!path.isEmpty())
      exportSelectionTo(path);
  });

  updateBackendText();
  m_status->setSummary(tr("No data · %1").arg(m_backendText));
  for (JobRunner* runner : {m_jobs, m_exploration->pipelineJobs(), m_exploration->trustJobs()})
    m_status->watch(runner);
  connect(m_status, &StatusLine::failed, this,
          [this](const QString& title, const QString& message) {
            if (m_pendingSession && title == m_openingTitle)
              showSessionDataProblem(message); // a session's data: say so and offer to locate it
            else
              showError(title, message);
          });
  connect(m_exploration, &ExplorationJobs::explored, this, &MainWindow::onExplored);
  connect(m_exploration, &ExplorationJobs::layoutFinished, this, &MainWindow::layoutFinished);
  connect(m_exploration, &ExplorationJobs::message, m_status, &StatusLine::showMessage);
  // Map trust's mean in the status bar (README): whenever computed, and by itself once a refined
  // map arrives where the graph is exact.
  connect(m_exploration, &ExplorationJobs::trustComputed, m_status, &StatusLine::showMapTrust);
  connect(m_exploration, &ExplorationJobs::layoutFinished, this, [this](int dim) {
    m_status->showMapTrust(dim, -1); // the last map's, until this one's is computed
    m_exploration->computeTrustIfCheap(dim);
  });
  connect(m_exploration, &ExplorationJobs::single, this, [this] {
    m_status->setSummary(summaryText() + tr(" · one item: no graph, no refined map"));
    emit explorationFinished();
  });
  connect(m_inspector, &ItemInspector::message, m_status, &StatusLine::showMessage);
  connect(m_clusterLabels, &ClusterLabelsControl::message, m_status, &StatusLine::showMessage);
  m_status->watch(m_clusterLabels->jobs());
  connect(m_inspector, &ItemInspector::bridgeAsked, this, &MainWindow::bridgeComponentsAndRetry);
  connect(m_inspector, &ItemInspector::componentsDisconnected, this,
          &MainWindow::componentsDisconnected);

  m_prefs = Preferences::load(); // the backend and GPUs: the command line's (runGui)
  applyPreferences();
  buildFileMenu(*this, *menuBar()->addMenu(tr("&File")), m_actions);
  buildEditMenu(*this, *menuBar()->addMenu(tr("&Edit")), m_actions);
  buildViewMenu(*this, *menuBar()->addMenu(tr("&View")), m_actions);
  buildHelpMenu(*this, *menuBar()->addMenu(tr("&Help")));
  updateMetricMenu();
  // Where the person left it; else 1200 × 800, or less on a small screen.
  if (!restoreGeometry(QSettings().value("window/geometry").toByteArray())) {
    const QRect screen = QGuiApplication::primaryScreen()
                             ? QGuiApplication::primaryScreen()->availableGeometry()
                             : QRect(0, 0, 1200, 800);
    resize(std::min(1200, screen.width() * 9 / 10), std::min(800, screen.height() * 9 / 10));
  }
  sizeDocks(*this, m_docks);
  unelideDockTabs(*this);
}

MainWindow::~MainWindow() {
  std::vector<JobRunner*> runners = {m_jobs, m_exploration->pipelineJobs(),
                                     m_exploration->trustJobs(), m_finder->jobs()};
  for (JobRunner* runner : m_colours->jobs())
    runners.push_back(runner);
  if (auto* facets = findChild<FacetsPanel*>()) {
    runners.push_back(facets->jobs());
    runners.push_back(facets->countJobs());
  }
  // Every engine loop checks its JobControl often; closing the window must still end the
  // program when a job is stuck: leave without waiting for it (outputs are written atomically).
  constexpr int kStopGraceMs = 3000;
  if (!JobRunner::stopAll(runners, kStopGraceMs)) {
    std::fprintf(stderr, "nearscape: a background job did not stop within %d ms; exiting\n",
                 kStopGraceMs);
    std::fflush(nullptr);
    std::_Exit(0);
  }
}

void MainWindow::connectPanels() {
  // Thumbnails decoded from image files arrive later: the strips update themselves; the card
  // when it still shows that item; the status bar counts files that could not be read.
  for (ItemStrip* strip : {m_neighbours, m_pathStrip})
    strip->setThumbnailer(m_thumbnailer);
  m_duplicates->setThumbnailer(m_thumbnailer);
  m_outlierPanel->setThumbnailer(m_thumbnailer);
  m_compare->setThumbnailer(m_thumbnailer);
  connect(m_thumbnailer, &Thumbnailer::thumbnailReady, this, [this](qint64 item) {
    if (m_hoverCard->isVisible() && m_hoverCard->item() == item)
      m_hoverCard->setThumbnail(m_thumbnailer->thumbnail(item));
  });
  connect(
      m_thumbnailer, &Thumbnailer::filesChecked, this,
      [this](int unreadable, int checked, int total) {
        if (unreadable > 0)
          m_status->showMessage(
              tr("%n image file(s) missing or unreadable (shown as a grey cross)", "", unreadable) +
                  (checked < total ? tr(", %1 of %2 checked").arg(checked).arg(total) : QString()),
              5000);
      });
  connect(m_welcome, &WelcomePage::openFileAsked, this, [this] { m_actions.openFile->trigger(); });
  connect(m_welcome, &WelcomePage::openExampleAsked, this,
          [this] { openPath(QString::fromStdString(defaultDatasetPath().string())); });
  // Items are named by the title column: cards and lists shown from now, and the lists shown.
  connect(m_session, &ExplorerSession::titleColumnChanged, this, [this] {
    const int column = m_session->titleColumn().column;
    for (ItemStrip* strip : {m_neighbours, m_pathStrip})
      strip->setTitleColumn(column);
    m_hoverCard->setTitleColumn(column);
    m_hoverCard->hide();
    if (const std::int64_t item = selectedItem(); item >= 0 && m_session->artefacts()) {
      const std::int64_t end = lastPath().found() ? lastPath().nodes.back() : -1;
      selectItem(item);
      if (end >= 0)
        showPathTo(end);
    }
  });
  // The panels follow the model; the window only passes on what a person chose in them.
  m_sweep->observe(m_session);
  m_duplicates->observe(m_session);
  m_outlierPanel->observe(m_session);
  m_compare->observe(m_session);
  // The second map is the same items: hovering or clicking there does what it does here.
  for (MapView* map : {m_maps->map(), m_maps->otherMap()}) {
    connect(map, &MapView::hovered, this, &MainWindow::showHover);
    connect(map, &MapView::clicked, this, &MainWindow::onMapClicked);
    // A card left where an item was before the map moved names the wrong point.
    connect(map, &MapView::viewChanged, m_hoverCard, &QWidget::hide);
    connect(map, &MapView::escapePressed, this, &MainWindow::deselect);
  }
  connect(m_maps->map(), &MapView::selectionDrawn, this, &MainWindow::onSelectionDrawn);
  for (ItemStrip* strip : {m_neighbours, m_pathStrip})
    connect(strip, &ItemStrip::itemChosen, this, [this](std::int32_t item) { selectItem(item); });
  connect(m_sweep, &SweepPanel::missedChosen, this, &MainWindow::showMissed);
  connect(m_sweep, &SweepPanel::studioRequested, this, &MainWindow::showTradeoffStudio);
  connect(m_duplicates, &DuplicatesPanel::groupChosen, this,
          [this](const std::vector<std::int64_t>& items) { setSelection(items); });
  connect(m_duplicates, &DuplicatesPanel::itemChosen, this, &MainWindow::selectItem);
  connect(m_outlierPanel, &OutliersPanel::itemChosen, this, &MainWindow::selectItem);
  connect(m_compare, &ComparePanel::itemChosen, this, &MainWindow::selectItem);
  connect(m_compare, &ComparePanel::failed, this,
          [this](const QString& message) { showError(tr("Compare"), message); });
  connect(m_compare, &ComparePanel::compared, this,
          [this](const QString& column, const std::vector<double>& values) {
            m_session->setComparedPath(m_compare->otherPath());
            m_colours->addPanelColumn(column, values);
            setColourBy(column);
            showOtherMap();
          });
}

void MainWindow::buildExploreBar() {
  QToolBar* bar = addToolBar(tr("Explore"));
  bar->setObjectName(QStringLiteral("exploreBar"));
  bar->setMovable(false);
  buildDragTools(*this, *bar, m_actions);
  bar->addSeparator();
  m_colours = new ColourControls(m_session, m_maps, m_exploration, bar);
  connect(m_colours, &ColourControls::message, m_status, &StatusLine::showMessage);
  bar->addSeparator();
  m_finder = new Finder(m_session, bar);
  connect(m_finder, &Finder::finished, this, &MainWindow::searchFinished);
  connect(m_finder, &Finder::failed, this, &MainWindow::showError);
  connect(m_finder, &Finder::message, m_status, &StatusLine::showMessage);
  connect(m_finder, &Finder::firstMatch, this, [this](std::int64_t item) {
    selectItem(item);
    m_maps->map()->centreOn(item);
  });
}

void MainWindow::openPath(const QString& path, const QString& metaPath) {
  m_lastError.clear();
  m_pendingSession.reset(); // openSession sets its own after this
  // Read whole, off the GUI thread, into a value the model takes only once it is complete: a
  // failure or a cancel leaves the model (and so the window and a session saved later) as it was.
  m_openingTitle = tr("Opening %1").arg(QFileInfo(path).fileName());
  m_jobs->run<OpenedData>(
      m_openingTitle,
      [context = m_context, path, metaPath](JobControl& job) {
        return readOpenedData(path, metaPath, context, job);
      },
      [this](OpenedData& opened) { commitOpened(opened); });
}

void MainWindow::commitOpened(OpenedData& opened) {
  const Dataset& ds = *opened.dataset;
  std::optional<Metric> sessionMetric;
  if (m_pendingSession) {
    // A session of other data is refused before anything changes.
    if (!m_pendingSession->contentHash.empty() && m_pendingSession->contentHash != ds.contentHash) {
      showSessionDataProblem(
          tr("%1 is a session of other data: %2 is not the data it was saved with (its content "
             "hash is %3, the session's %4). Nothing was changed.")
              .arg(m_pendingSessionPath, QString::fromStdString(ds.path),
                   QString::fromStdString(ds.contentHash),
                   QString::fromStdString(m_pendingSession->contentHash)));
      return;
    }
    // The session's metric wins over the file's, and stays the choice for later files.
    sessionMetric = parseMetric(m_pendingSession->metric);
    if (sessionMetric)
      m_chosenMetric = *sessionMetric;
    setMapDimension(m_pendingSession->dim);
  }
  if (sessionMetric || m_metricForced) {
    opened.metric = sessionMetric.value_or(m_chosenMetric);
    opened.metricSource = tr("chosen");
  } else if (ds.metric) {
    opened.metric = *ds.metric;
    opened.metricSource = tr("the file's");
  } else {
    opened.metric = m_chosenMetric;
    opened.metricSource = m_chosenMetric == Metric::L2 ? tr("default") : tr("chosen");
  }
  m_unopenedSession.reset(); // other data, or the session's own, is open now
  m_exploration->cancel();   // the old data's
  const double seconds = opened.seconds;
  m_session->setData(std::move(opened));
  m_session->setSessionPath(m_pendingSession ? m_pendingSessionPath : QString());
  updateMetricMenu();
  m_status->setSummary(summaryText() + tr(" · PCA map in %1 s").arg(seconds, 0, 'f', 2));
  if (m_pendingSession && !applySessionToData())
    return;
  if (!m_session->dataset()->warnings.empty()) // a sidecar of other data, skipped; a header
    m_status->showWarnings(m_session->dataset()->warnings);
  emit mapShown();
  m_exploration->start();
}

void MainWindow::showData() {
  const auto& dataset = m_session->dataset();
  m_thumbnailer->setDataset(dataset);
  m_status->hideWarnings();
  m_central->setCurrentWidget(m_maps);
  const int dim = m_session->mapDim();
  // Grey until the colour controls (observing the same change) paint the colouring.
  m_maps->map()->setPoints(m_session->pcaView(dim), dim,
                           std::vector<std::uint8_t>(std::size_t(3 * dataset->size()), 160));
  setWindowTitle(
      tr("Nearscape — %1").arg(QFileInfo(QString::fromStdString(dataset->path)).fileName()));
  showMapsSideBySide(false);
}

void MainWindow::onExplored() {
  const auto& e = m_session->artefacts();
  const QString cached = tr(" (cached)");
  m_status->setSummary(summaryText() + tr(" · %1 %2-NN graph %3 s%4 · map %5 s%6 · MST %7 s")
                                           .arg(QString::fromStdString(e->graphMethod))
                                           .arg(e->graphK)
                                           .arg(e->graphSeconds, 0, 'f', 1)
                                           .arg(e->graphCached ? cached : QString())
                                           .arg(e->layoutSeconds, 0, 'f', 1)
                                           .arg(e->layoutCached ? cached : QString())
                                           .arg(e->mstSeconds, 0, 'f', 2));
  m_status->setSummaryToolTip(QString::fromStdString(e->graph.report.describe()));
  applyPendingSession(); // what needs the graph: a computed colouring, the item, the path
  emit explorationFinished();
}

void MainWindow::setMapDimension(int dim) {
  dim = dim == 3 ? 3 : 2;
  if (m_actions.map3D && m_actions.map3D->isChecked() != (dim == 3))
    m_actions.map3D->setChecked(dim == 3);
  m_session->setMapDim(dim);
}

void MainWindow::onMapDimChanged(int dim) {
  if (!m_session->dataset())
    return;
  const bool refined = mapRefined(dim);
  m_maps->map()->setPositions(refined ? m_session->layout(dim) : m_session->pcaView(dim), dim);
  // Without a graph yet, the exploration's end starts this layout.
  if (!refined && m_session->artefacts())
    m_exploration->startLayout(dim);
}

void MainWindow::setMetric(Metric metric) {
  m_chosenMetric = metric;
  if (!m_session->dataset() || metric == m_session->metric()) {
    updateMetricMenu();
    return;
  }
  m_session->setMetric(metric, tr("chosen")); // the panels follow
  updateMetricMenu();
  showMapsSideBySide(false);
  restartExploration();
}

void MainWindow::forceMetric(Metric metric) {
  m_metricForced = true;
  setMetric(metric);
}

void MainWindow::restartExploration() {
  // Everything built from the old graph goes; the PCA map (metric-free) stays on screen.
  m_exploration->cancel();
  m_session->clearArtefacts();
  m_inspector->clear();
  const int dim = m_session->mapDim();
  m_maps->map()->setPositions(m_session->pcaView(dim), dim);
  m_status->setSummary(summaryText());
  m_exploration->start();
}

void MainWindow::updateBackendText() {
  // The status bar names the backend; why there is no GPU goes in its tooltip and the About box.
  m_backendText = backendText(m_context);
  m_status->setSummaryToolTip(QString::fromStdString(describeBackend(m_context)));
  if (!m_session->dataset())
    m_status->setSummary(tr("No data · %1").arg(m_backendText));
}

void MainWindow::setPreferences(const Preferences& preferences) {
  const Preferences old = m_prefs;
  m_prefs = preferences;
  m_prefs.save();
  m_context.backend = m_prefs.backend;
  try {
    applyDevices(m_context, m_prefs.devices);
  } catch (const std::exception& e) { // the dialog checked it; a GPU gone since: the first one
    applyDevices(m_context, QString());
    m_status->showMessage(tr("GPUs: %1").arg(QString::fromStdString(e.what())), 8000);
  }
  updateBackendText();
  m_sweep->setContext(m_context);
  m_duplicates->setContext(m_context);
  m_outlierPanel->setContext(m_context);
  m_compare->setContext(m_context);
  applyPreferences();
  if (!m_session->dataset())
    return;
  if (old.graphK != m_prefs.graphK || old.graphMethod != m_prefs.graphMethod ||
      old.backend != m_prefs.backend || old.devices != m_prefs.devices)
    restartExploration(); // the graph and what stands on it
  else if (old.shownNeighbours != m_prefs.shownNeighbours && selectedItem() >= 0)
    selectItem(selectedItem());
}

void MainWindow::applyPreferences() {
  m_cache = ArtefactCache(ArtefactCache::defaultFolder(), m_prefs.cacheBytes());
  m_thumbnailer->setDiskCache(std::make_shared<const ArtefactCache>(m_cache));
  m_exploration->setContext(m_context);
  m_exploration->setCache(m_cache);
  m_exploration->setGraph(m_prefs.graphK, m_prefs.graphMethod);
  m_inspector->setShownNeighbours(m_prefs.shownNeighbours);
}

void MainWindow::clearCache() {
  const std::uint64_t bytes = m_cache.bytes();
  try {
    m_cache.clear();
    m_status->showMessage(tr("Cache cleared: %1 MB freed in %2")
                              .arg(double(bytes) / 1e6, 0, 'f', 1)
                              .arg(QString::fromStdString(m_cache.folder().string())),
                          8000);
  } catch (const std::exception& e) {
    showError(tr("Clear the Cache"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  m_finder->jobs()->cancel(); // a closed window's search is of no use (the others: ~MainWindow)
  QSettings().setValue("window/geometry", saveGeometry());
  QMainWindow::closeEvent(event);
}

void MainWindow::updateMetricMenu() {
  for (const auto& [metric, action] : m_actions.metrics)
    action->setChecked(metric == m_session->metric());
}

QString MainWindow::summaryText() const {
  const auto& ds = m_session->dataset();
  if (!ds)
    return tr("No data · %1").arg(m_backendText);
  const std::string_view metric = metricName(m_session->metric());
  return tr("n = %L1 · d = %2 · %3 (%4) · %5")
      .arg(ds->size())
      .arg(ds->dim())
      .arg(QString::fromUtf8(metric.data(), qsizetype(metric.size())))
      .arg(m_session->metricSource())
      .arg(m_backendText);
}

void MainWindow::attachMetadataFile(const QString& metaPath) {
  const auto current = m_session->dataset();
  if (!current)
    return;
  const std::string meta = metaPath.toStdString();
  struct Attached {
    std::shared_ptr<Dataset> dataset;
    ColumnChoices columns;
  };
  m_jobs->run<Attached>(
      tr("Reading metadata"),
      [current, meta](JobControl& job) {
        Attached attached;
        attached.dataset = std::make_shared<Dataset>(*current);
        attached.dataset->warnings.clear(); // about the metadata replaced (a skipped sidecar)
        nearscape::attachMetadataFile(*attached.dataset, meta);
        attached.columns = columnChoices(*attached.dataset, job);
        return attached;
      },
      [this, metaPath, current](Attached& attached) {
        if (m_session->dataset() != current)
          return; // other data was opened meanwhile
        m_status->hideWarnings();
        m_thumbnailer->setDataset(attached.dataset);
        m_session->setMetadata(attached.dataset, metaPath, attached.columns.colourable,
                               attached.columns.numeric);
        if (!attached.dataset->warnings.empty())
          m_status->showWarnings(attached.dataset->warnings);
      });
}

void MainWindow::compareWith(const QString& path) {
  m_docks.compare->raise();
  m_compare->compareWith(path);
}

// The operations below pass on to the part that does the work; menus, the command line and the
// tests call them here.

void MainWindow::selectItem(std::int64_t item) {
  m_inspector->selectItem(item);
}

void MainWindow::showPathTo(std::int64_t item) {
  m_inspector->showPathTo(item);
}

void MainWindow::showMissed(std::int64_t query, const std::vector<std::int32_t>& missed,
                            const QString& setting) {
  m_inspector->showMissed(query, missed, setting);
}

void MainWindow::bridgeComponentsAndRetry(std::int64_t retryTo) {
  m_exploration->bridgeComponents([this, retryTo] {
    if (retryTo >= 0 && selectedItem() >= 0)
      showPathTo(retryTo);
  });
}

void MainWindow::onMapClicked(std::int64_t item, Qt::KeyboardModifiers modifiers) {
  if (item < 0) {
    if (!(modifiers & (Qt::ShiftModifier | Qt::AltModifier | Qt::ControlModifier)))
      deselect(); // a click on empty space
    return;
  }
  if ((modifiers & (Qt::ControlModifier | Qt::ShiftModifier)) && selectedItem() >= 0)
    showPathTo(item);
  else
    selectItem(item);
}

void MainWindow::deselect() {
  m_session->setPath({});
  m_session->setSelectedItem(-1);
  m_inspector->clear();
  if (!selection().empty())
    setSelection({}); // undoable
}

void MainWindow::showHover(std::int64_t item, const QPoint& globalPos) {
  if (item < 0 || !m_session->dataset()) {
    m_hoverCard->hide();
    return;
  }
  m_hoverCard->showItem(*m_session->dataset(), item, m_thumbnailer->thumbnail(item), globalPos);
}

void MainWindow::showTradeoffStudio() {
  m_studio->show();
  m_studio->raise();
  m_studio->activateWindow();
}

bool MainWindow::viewPending() const {
  // The facets' columns, read when the data opens, matter only to brushes waiting for them.
  const auto* facets = findChild<FacetsPanel*>();
  return m_finder->pending() || m_colours->pending() || m_compare->running() ||
         m_clusterLabels->pending() ||
         (facets && !m_session->facets().empty() && facets->pending());
}
void MainWindow::invertSelection() {
  setSelection(invertedSelection(*m_session));
}

void MainWindow::growSelection() {
  if (!m_session->artefacts())
    m_status->showMessage(tr("The neighbours come from the kNN graph, which is not built yet."),
                          6000);
  else
    setSelection(grownSelection(*m_session));
}

void MainWindow::setDragTool(int tool) {
  tool = std::clamp(tool, 0, 2);
  m_maps->map()->setDragTool(MapView::DragTool(tool));
  m_actions.dragTools[std::size_t(tool)]->setChecked(true);
}

void MainWindow::setDensityMode(MapView::DensityMode mode) {
  m_maps->map()->setDensityMode(mode);
  if (QAction* action = m_actions.density[std::size_t(mode)]; action && !action->isChecked())
    action->setChecked(true);
}

void MainWindow::onSelectionDrawn(const QPolygonF& polygon, Qt::KeyboardModifiers modifiers) {
  setSelection(drawnSelection(selection(), mapView()->itemsInside(polygon), modifiers));
  m_docks.selection->raise(); // what was drawn: its count, labels and items
}

Session MainWindow::currentSession() const {
  Session s = Session::of(*m_session);
  if (dataset())
    s.camera = mapView()->camera();
  if (m_clusterLabels->shown())
    s.clusterLabels = m_clusterLabels->column();
  s.windowState = saveState();
  return s;
}

bool MainWindow::saveSessionTo(const QString& path) {
  if (!m_session->dataset())
    return false;
  // The opened session is no input here: saving over it is how a session is updated.
  const QString compared = m_session->comparedPath();
  return m_exports->run(tr("session"), [&] {
    currentSession().write(path, compared.isEmpty() ? QStringList() : QStringList{compared});
  });
}

void MainWindow::openSession(const QString& path) {
  Session session;
  try {
    session = Session::read(path);
  } catch (const std::exception& e) {
    showError(tr("Open Session"), QString::fromUtf8(e.what()));
    return;
  }
  // Nothing changes until its data is open (commitOpened): a failure leaves the window as is.
  m_unopenedSession.reset();
  openPath(session.data, session.metadata);
  m_pendingSession = std::move(session);
  m_pendingSessionPath = path;
}

bool MainWindow::applySessionToData() {
  m_pendingSession->restoreInto(*m_session, colourChoices());
  if (!m_pendingSession->windowState.isEmpty())
    restoreState(m_pendingSession->windowState);
  return true;
}

void MainWindow::showSessionDataProblem(const QString& reason) {
  // A located file that is refused keeps the session as saved (its data's original name).
  Session pending = *std::exchange(m_pendingSession, std::nullopt);
  if (!m_unopenedSession) {
    m_unopenedSession = std::move(pending);
    m_unopenedSessionPath = m_pendingSessionPath;
  }
  m_missing->setProblem(m_unopenedSessionPath, m_unopenedSession->data, reason,
                        dataset() != nullptr);
  m_central->setCurrentWidget(m_missing);
  m_lastError = reason;
  m_status->showMessage(tr("Open Session: %1").arg(reason), 10000);
  emit loadFailed(reason);
}

bool MainWindow::locateSessionData(const QString& dataPath) {
  if (!m_unopenedSession)
    return false;
  Session session = *m_unopenedSession;
  session.data = dataPath;
  // Metadata moved along with the data is found beside it; metadata gone is left out.
  if (!session.metadata.isEmpty() && !QFileInfo::exists(session.metadata)) {
    const QString beside =
        QFileInfo(dataPath).dir().filePath(QFileInfo(session.metadata).fileName());
    if (QFileInfo::exists(beside)) {
      session.metadata = beside;
    } else {
      m_status->showMessage(
          tr("The session's metadata %1 is missing too: opened without it").arg(session.metadata),
          10000);
      session.metadata.clear();
    }
  }
  openPath(session.data, session.metadata);
  m_pendingSession = std::move(session);
  m_pendingSessionPath = m_unopenedSessionPath;
  return true;
}

void MainWindow::applyPendingSession() {
  if (!m_pendingSession)
    return;
  const Session s = *std::exchange(m_pendingSession, std::nullopt);
  // A computed column needs the graph.
  if (s.colourBy != m_session->colouring() && !s.restoreColouring(*m_session, colourChoices()))
    showError(tr("Open Session"),
              tr("%1: no column '%2' to colour by").arg(m_pendingSessionPath, s.colourBy));
  if (s.camera && s.dim == m_session->mapDim())
    m_maps->map()->setCamera(*s.camera);
  if (s.clusterLabels) {
    if (!s.clusterLabels->isEmpty())
      m_clusterLabels->setColumn(*s.clusterLabels);
    m_clusterLabels->setShown(true);
  } else {
    m_clusterLabels->setShown(false);
  }
  // The item came back with the data (restoreInto); its neighbours and path need the graph.
  if (const std::int64_t item = m_session->selectedItem(); item >= 0) {
    selectItem(item);
    if (const std::int64_t end = s.restorablePathEnd(*m_session); end >= 0)
      showPathTo(end);
  }
}

bool MainWindow::exportMapTo(const QString& path) {
  return m_exports->map(path);
}

bool MainWindow::exportNeighboursTo(const QString& path) {
  return m_exports->neighbours(path);
}

bool MainWindow::exportPathTo(const QString& path) {
  return m_exports->path(path);
}

bool MainWindow::exportPictureTo(const QString& path) {
  return m_exports->picture(path);
}

bool MainWindow::exportSelectionTo(const QString& path) {
  return m_exports->selection(path);
}

QStringList MainWindow::inputFiles() const {
  return m_session->inputFiles();
}

void MainWindow::showOtherMap() {
  const std::vector<float>& positions = m_compare->otherMap();
  if (!dataset() || positions.size() != std::size_t(dataset()->size()) * 2)
    return;
  m_maps->setOtherPoints(positions);
  m_actions.sideBySide->setEnabled(true);
  showMapsSideBySide(true);
}

bool MainWindow::showMapsSideBySide(bool on) {
  const bool available = dataset() && otherMapView()->pointCount() == dataset()->size() &&
                         !m_compare->otherMap().empty();
  on = on && available;
  if (!available && m_actions.sideBySide)
    m_actions.sideBySide->setEnabled(false);
  if (m_actions.sideBySide) {
    const QSignalBlocker block(m_actions.sideBySide);
    m_actions.sideBySide->setChecked(on);
  }
  m_maps->showOther(on);
  // Side by side, each map says whose it is.
  m_maps->map()->setCaption(on && dataset() ? QFileInfo(m_session->dataPath()).fileName()
                                            : QString());
  m_maps->otherMap()->setCaption(on ? QFileInfo(m_compare->otherPath()).fileName() : QString());
  if (on) {
    m_colours->recolour(); // the same colours, dimming and hidden groups on both
    m_status->showMessage(
        tr("Left: this embedding's map; right: %1's own map — the same items, linked.")
            .arg(QFileInfo(m_compare->otherPath()).fileName()),
        8000);
  }
  return on;
}

void MainWindow::showError(const QString& title, const QString& message) {
  m_lastError = message;
  m_status->showMessage(title + QStringLiteral(": ") + message, 10000);
  if (m_errorDisplay)
    m_errorDisplay(title, message);
  emit loadFailed(message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.first().isLocalFile())
    openPath(urls.first().toLocalFile());
}

} // namespace nearscape::ui

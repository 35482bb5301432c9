#include "MainWindow.h"

#include "ColorBar.h"
#include "Colors.h"
#include "Colouring.h"
#include "ComparePanel.h"
#include "DuplicatesPanel.h"
#include "Export.h"
#include "HoverCard.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "LegendPanel.h"
#include "MapView.h"
#include "OutliersPanel.h"
#include "PreferencesDialog.h"
#include "SweepPanel.h"
#include "Thumbnailer.h"
#include "TradeoffStudio.h"
#include "WelcomePage.h"

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <tuple>

namespace nearscape::ui {

struct MainWindow::Exploration {
  std::shared_ptr<const Dataset> dataset;         ///< what it was computed for
  Metric metric = Metric::L2;                     ///< of the graph, the neighbours and the paths
  KnnResult graph;                                ///< kNN graph, k = graphK (exact or NN-Descent)
  int graphK = 0;                                 ///< the preferred k, or n − 1 for smaller data
  std::string graphKey;                           ///< how the graph was built (the cache's key)
  bool graphCached = false, layoutCached = false; ///< read back from the artefact cache
  GraphMethod method = GraphMethod::Exact;        ///< the preferred method, resolved
  std::string graphMethod;                        ///< how the graph was built
  std::shared_ptr<ExactKnnIndex> index;           ///< exact neighbours of a clicked item
  // The symmetrised graph is not kept: the forest answers paths and counts the components
  // (its trees), and at 10M items the graph would hold gigabytes.
  std::shared_ptr<SpanningForest> forest;
  std::vector<float> layout; ///< the refined map, n × layoutDim
  int layoutDim = 2;
  double graphSeconds = 0, layoutSeconds = 0, mstSeconds = 0;
};

namespace {

/// The artefact cache's key of a kNN graph: everything that shapes it.
std::string graphKey(GraphMethod method, int k, std::uint64_t seed) {
  return "method=" + std::string(graphMethodName(method)) + ",k=" + std::to_string(k) +
         ",seed=" + std::to_string(seed);
}

/// The key of a map refined from that graph (its start, the PCA view, is the data's own).
std::string mapKey(const std::string& graphKey, Metric metric, int dim) {
  return graphKey + ",metric=" + std::string(metricName(metric)) + ",dim=" + std::to_string(dim) +
         ",layout=default";
}

/// The explore pipeline as the GUI runs it: the preferred graph, a map that refines visibly.
ExploreParams guiExploreParams(int graphK, GraphMethod method, Metric metric, int dim) {
  ExploreParams params;
  params.metric = metric;
  params.k = graphK;
  params.method = method;
  params.layout.dim = dim;
  params.layout.reportEvery = 5;
  return params;
}

/// A stage hook that supplies `result` (already at hand: the graph of an earlier exploration).
template <typename T> auto supply(const T& result) {
  return [result](const nearscape::Exploration&) { return std::optional<T>(result); };
}

} // namespace

struct MainWindow::Loaded {
  std::shared_ptr<Dataset> dataset;
  std::vector<float> pca; ///< n × 3 PCA coordinates (zeros past the data's dimension)
  ColumnChoices columns;  ///< its metadata columns worth colouring by
  double seconds = 0;
};

MainWindow::MainWindow(Context context, QWidget* parent)
    : QMainWindow(parent), m_context(context), m_map(new MapView(this)),
      m_legend(new LegendPanel(this)), m_hoverCard(new HoverCard(this)),
      m_thumbnailer(new Thumbnailer(this)), m_jobs(new JobRunner(this)),
      m_pipelineJobs(new JobRunner(this)), m_trustJobs(new JobRunner(this)),
      m_searchJobs(new JobRunner(this)), m_colourJobs(new JobRunner(this)),
      m_opacityJobs(new JobRunner(this)), m_sizeJobs(new JobRunner(this)),
      m_neighbours(new ItemStrip(false, this)), m_pathStrip(new ItemStrip(true, this)),
      m_sweep(new SweepPanel(context, this)), m_duplicates(new DuplicatesPanel(context, this)),
      m_outlierPanel(new OutliersPanel(context, this)), m_compare(new ComparePanel(context, this)),
      m_summary(new QLabel(this)), m_progress(new QProgressBar(this)),
      m_cancel(new QToolButton(this)), m_warningButton(new QToolButton(this)) {
  setWindowTitle(tr("Nearscape"));
  setAcceptDrops(true);
  // Thumbnails decoded from image files arrive later: the strips update themselves; the card
  // when it still shows that item; the status bar counts files that could not be read.
  m_neighbours->setThumbnailer(m_thumbnailer);
  m_pathStrip->setThumbnailer(m_thumbnailer);
  m_duplicates->setThumbnailer(m_thumbnailer);
  m_outlierPanel->setThumbnailer(m_thumbnailer);
  m_compare->setThumbnailer(m_thumbnailer);
  connect(m_thumbnailer, &Thumbnailer::thumbnailReady, this, [this](qint64 item) {
    if (m_hoverCard->isVisible() && m_hoverCard->item() == item)
      m_hoverCard->setThumbnail(m_thumbnailer->thumbnail(item));
  });
  connect(m_thumbnailer, &Thumbnailer::countsChanged, this, [this](int, int failed) {
    if (failed > 0)
      statusBar()->showMessage(
          tr("%n image file(s) missing or unreadable (shown as a grey cross)", "", failed), 5000);
  });
  // The welcome page until data is open, then the map.
  m_central = new QStackedWidget(this);
  m_welcome = new WelcomePage(m_central);
  m_central->addWidget(m_welcome);
  // The map, and beside it the second embedding's map once a comparison made one.
  m_maps = new QSplitter(Qt::Horizontal, m_central);
  m_otherMap = new MapView(m_maps);
  m_otherMap->setObjectName(QStringLiteral("otherMap"));
  m_maps->addWidget(m_map);
  m_maps->addWidget(m_otherMap);
  m_otherMap->hide();
  m_central->addWidget(m_maps);
  setCentralWidget(m_central);
  connect(m_welcome, &WelcomePage::openFileAsked, this, [this] { m_openFile->trigger(); });
  connect(m_welcome, &WelcomePage::openExampleAsked, this,
          [this] { openPath(QString::fromStdString(defaultDatasetPath().string())); });
  auto* dock = new QDockWidget(tr("Colours"), this);
  dock->setObjectName(QStringLiteral("legendDock"));
  {
    // The legend (categories, with check boxes that hide them) or the colour bar (numbers).
    auto* key = new QWidget(this);
    auto* layout = new QVBoxLayout(key);
    layout->setContentsMargins(0, 0, 0, 0);
    m_colorBar = new ColorBar(key);
    m_colorBar->hide();
    layout->addWidget(m_colorBar, 0, Qt::AlignTop);
    // A numeric colouring filters by a range of its values: items outside (or without a
    // value) are hidden, as unchecked categories are.
    m_rangeFilter = new QWidget(key);
    auto* range = new QHBoxLayout(m_rangeFilter);
    range->setContentsMargins(4, 0, 4, 0);
    m_rangeFrom = new QDoubleSpinBox(m_rangeFilter);
    m_rangeTo = new QDoubleSpinBox(m_rangeFilter);
    m_rangeFrom->setObjectName(QStringLiteral("rangeFrom"));
    m_rangeTo->setObjectName(QStringLiteral("rangeTo"));
    range->addWidget(new QLabel(tr("Show from"), m_rangeFilter));
    range->addWidget(m_rangeFrom, 1);
    range->addWidget(new QLabel(tr("to"), m_rangeFilter));
    range->addWidget(m_rangeTo, 1);
    for (QDoubleSpinBox* box : {m_rangeFrom, m_rangeTo}) {
      box->setDecimals(3);
      box->setKeyboardTracking(false);
      connect(box, &QDoubleSpinBox::valueChanged, this, [this] { applyVisibility(); });
    }
    m_rangeFilter->hide();
    layout->addWidget(m_rangeFilter, 0, Qt::AlignTop);
    layout->addWidget(m_legend, 1);
    dock->setWidget(key);
  }
  m_legendDock = dock;
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  auto* neighboursDock = new QDockWidget(tr("Nearest neighbours"), this);
  neighboursDock->setObjectName(QStringLiteral("neighboursDock"));
  neighboursDock->setWidget(m_neighbours);
  addDockWidget(Qt::RightDockWidgetArea, neighboursDock);
  auto* pathDock = new QDockWidget(tr("Smoothest path"), this);
  pathDock->setObjectName(QStringLiteral("pathDock"));
  pathDock->setWidget(m_pathStrip);
  addDockWidget(Qt::BottomDockWidgetArea, pathDock);
  m_pathStrip->setMaximumHeight(150);
  auto* sweepDock = new QDockWidget(tr("Index sweep"), this);
  sweepDock->setObjectName(QStringLiteral("sweepDock"));
  // In a scroll area: the panel's plot and table need height the legend's tab does not.
  auto* sweepScroll = new QScrollArea(this);
  sweepScroll->setWidget(m_sweep);
  sweepScroll->setWidgetResizable(true);
  sweepScroll->setFrameShape(QFrame::NoFrame);
  sweepDock->setWidget(sweepScroll);
  addDockWidget(Qt::RightDockWidgetArea, sweepDock);
  tabifyDockWidget(dock, sweepDock);
  dock->raise();
  m_sweepDock = sweepDock;
  auto* duplicatesDock = new QDockWidget(tr("Duplicates"), this);
  duplicatesDock->setObjectName(QStringLiteral("duplicatesDock"));
  duplicatesDock->setWidget(m_duplicates);
  addDockWidget(Qt::RightDockWidgetArea, duplicatesDock);
  tabifyDockWidget(sweepDock, duplicatesDock);
  dock->raise();
  m_duplicatesDock = duplicatesDock;
  auto* outliersDock = new QDockWidget(tr("Outliers"), this);
  outliersDock->setObjectName(QStringLiteral("outliersDock"));
  outliersDock->setWidget(m_outlierPanel);
  addDockWidget(Qt::RightDockWidgetArea, outliersDock);
  tabifyDockWidget(duplicatesDock, outliersDock);
  dock->raise();
  m_outliersDock = outliersDock;
  auto* compareDock = new QDockWidget(tr("Compare"), this);
  compareDock->setObjectName(QStringLiteral("compareDock"));
  compareDock->setWidget(m_compare);
  addDockWidget(Qt::RightDockWidgetArea, compareDock);
  tabifyDockWidget(outliersDock, compareDock);
  dock->raise();
  m_compareDock = compareDock;
  resizeDocks({pathDock}, {130}, Qt::Vertical);
  m_neighbours->setToolTip(
      tr("Click an item in the map; Ctrl+click another for the smoothest path"));

  updateBackendText();
  m_summary->setTextFormat(Qt::PlainText); // it quotes the file's name
  m_summary->setText(tr("No data · %1").arg(m_backendText));
  statusBar()->addWidget(m_summary, 1);
  m_progress->setRange(0, 1000);
  m_progress->setMaximumWidth(220);
  m_progress->setTextVisible(true);
  m_progress->hide();
  m_cancel->setText(tr("Cancel"));
  m_cancel->hide();
  statusBar()->addPermanentWidget(m_progress);
  statusBar()->addPermanentWidget(m_cancel);
  m_warningButton->setObjectName(QStringLiteral("warnings"));
  m_warningButton->setAutoRaise(true);
  // Its icon and text set now, at their final height: a permanent widget growing taller
  // re-lays the bar, which shows the summary again under a message.
  m_warningButton->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
  m_warningButton->setIconSize(QSize(16, 16));
  m_warningButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_warningButton->setText(tr("warning"));
  m_warningButton->hide();
  statusBar()->addPermanentWidget(m_warningButton);
  connect(m_warningButton, &QToolButton::clicked, this, [this] {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Reading the data"), m_warningText,
                                QMessageBox::Ok, this);
    box->setTextFormat(Qt::PlainText); // it quotes the files
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
  connect(m_cancel, &QToolButton::clicked, m_jobs, &JobRunner::cancel);

  // A progress bar only for work that lasts: it appears after ~150 ms.
  auto* showTimer = new QTimer(this);
  showTimer->setSingleShot(true);
  showTimer->setInterval(150);
  auto anyBusy = [this] { return m_jobs->busy() || m_pipelineJobs->busy() || m_trustJobs->busy(); };
  connect(showTimer, &QTimer::timeout, this, [this, anyBusy] {
    if (anyBusy()) {
      m_progress->show();
      m_cancel->show();
    }
  });
  connect(m_cancel, &QToolButton::clicked, m_pipelineJobs, &JobRunner::cancel);
  connect(m_cancel, &QToolButton::clicked, m_trustJobs, &JobRunner::cancel);
  for (JobRunner* runner : {m_jobs, m_pipelineJobs, m_trustJobs}) {
    connect(runner, &JobRunner::started, this, [this, showTimer](const QString& title) {
      m_progress->setValue(0);
      m_progress->setFormat(title + QStringLiteral(" %p%"));
      showTimer->start();
    });
    connect(runner, &JobRunner::progress, this, [this](double fraction, const QString& message) {
      m_progress->setValue(int(fraction * 1000));
      if (!message.isEmpty())
        m_progress->setFormat(message + QStringLiteral(" %p%"));
    });
    auto hideProgress = [this, anyBusy] {
      if (!anyBusy()) {
        m_progress->hide();
        m_cancel->hide();
      }
    };
    connect(runner, &JobRunner::finished, this, hideProgress);
    connect(runner, &JobRunner::cancelled, this, [this, hideProgress](const QString& title) {
      hideProgress();
      statusBar()->showMessage(tr("%1: cancelled").arg(title), 5000);
    });
    connect(runner, &JobRunner::failed, this,
            [this, hideProgress](const QString& title, const QString& message) {
              hideProgress();
              showError(title, message);
            });
  }

  connect(m_legend, &LegendPanel::visibilityChanged, this, &MainWindow::applyVisibility);
  connect(m_map, &MapView::hovered, this, &MainWindow::showHover);
  connect(m_map, &MapView::clicked, this, &MainWindow::onMapClicked);
  // The second map is the same items: hovering or clicking there does what it does here.
  connect(m_otherMap, &MapView::hovered, this, &MainWindow::showHover);
  connect(m_otherMap, &MapView::clicked, this, &MainWindow::onMapClicked);
  connect(m_map, &MapView::hovered, this,
          [this](std::int64_t item, const QPoint&) { linkHover(m_map, item); });
  connect(m_otherMap, &MapView::hovered, this,
          [this](std::int64_t item, const QPoint&) { linkHover(m_otherMap, item); });
  connect(m_neighbours, &ItemStrip::itemChosen, this,
          [this](std::int32_t item) { selectItem(item); });
  connect(m_pathStrip, &ItemStrip::itemChosen, this,
          [this](std::int32_t item) { selectItem(item); });
  connect(m_sweep, &SweepPanel::missedChosen, this, &MainWindow::showMissed);
  m_studio = new TradeoffStudio(m_sweep, this); // its own window, closed with this one
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
            m_panelColumns[column] = values;
            refreshColourChoices();
            setColourBy(column);
            showOtherMap();
          });
  m_prefs = Preferences::load();
  m_cache = ArtefactCache(ArtefactCache::defaultFolder(), m_prefs.cacheBytes());
  m_thumbnailer->setDiskCache(std::make_shared<const ArtefactCache>(m_cache));
  buildExploreBar();
  buildSelectionDock();
  buildMenus();
  // Where the person left it; else 1200 × 800, or less on a small screen.
  if (!restoreGeometry(QSettings().value("window/geometry").toByteArray())) {
    const QRect screen = QGuiApplication::primaryScreen()
                             ? QGuiApplication::primaryScreen()->availableGeometry()
                             : QRect(0, 0, 1200, 800);
    resize(std::min(1200, screen.width() * 9 / 10), std::min(800, screen.height() * 9 / 10));
  }
  // The legend (tabbed with the sweep) and the neighbours share the right side about equally.
  resizeDocks({dock, neighboursDock}, {330, 400}, Qt::Vertical);
  resizeDocks({dock}, {300}, Qt::Horizontal);
}

MainWindow::~MainWindow() {
  const std::array<JobRunner*, 7> runners = {
      m_jobs, m_pipelineJobs, m_trustJobs, m_searchJobs, m_colourJobs, m_opacityJobs, m_sizeJobs};
  for (JobRunner* runner : runners)
    runner->cancel();
  // Every engine loop checks its JobControl often; a job that has not stopped after a few
  // seconds is stuck in a call that cannot be interrupted (a blocking read, a driver call).
  // Closing the window must still end the program: leave without waiting for it. Outputs are
  // written atomically, so nothing is left half-written.
  constexpr int kStopGraceMs = 3000;
  if (!std::all_of(runners.begin(), runners.end(),
                   [](JobRunner* runner) { return runner->waitForDone(kStopGraceMs); })) {
    std::fprintf(stderr, "nearscape: a background job did not stop within %d ms; exiting\n",
                 kStopGraceMs);
    std::fflush(nullptr);
    std::_Exit(0);
  }
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  m_openFile = file->addAction(tr("&Open File…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open embeddings"), {},
        tr("Embeddings (*.npy *.fvecs *.bvecs *.ivecs *.hdf5 *.h5 *.tsv *.gz *-ubyte);;All files "
           "(*)"));
    if (!path.isEmpty())
      openPath(path);
  });
  file->addAction(tr("Open IDX &Folder…"), this, [this] {
    const QString path = QFileDialog::getExistingDirectory(this, tr("Open a folder of IDX files"));
    if (!path.isEmpty())
      openPath(path);
  });
  m_examples = file->addMenu(tr("Open &Example"));
  connect(m_examples, &QMenu::aboutToShow, this, [this] {
    m_examples->clear();
    const QString fashion = QString::fromStdString(defaultDatasetPath().string());
    QAction* a = m_examples->addAction(tr("Fashion-MNIST (70,000 images)"), this,
                                       [this, fashion] { openPath(fashion); });
    a->setEnabled(QFileInfo::exists(fashion));
    const QString text = QString::fromStdString(debianTextPath().string());
    QAction* b = m_examples->addAction(tr("debian-text (Debian package descriptions)"), this,
                                       [this, text] { openPath(text); });
    b->setEnabled(QFileInfo::exists(text));
    if (!b->isEnabled())
      b->setToolTip(tr("Build it with scripts/make-debian-text.sh"));
  });
  file->addAction(tr("Attach &Metadata…"), this, [this] {
    if (!m_dataset) {
      showError(tr("Attach Metadata"), tr("Open a data set first."));
      return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Attach metadata"), {},
                                                      tr("Metadata (*.tsv);;All files (*)"));
    if (!path.isEmpty())
      attachMetadataFile(path);
  });
  file->addAction(tr("Compare &With…"), this, [this] {
    if (!m_dataset)
      return;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("A second embedding of the same items"), QString(),
        tr("Embeddings (*.npy *.fvecs *.bvecs *.h5 *.hdf5 *.tsv);;All files (*)"));
    if (path.isEmpty())
      return;
    m_compareDock->raise();
    m_compare->compareWith(path);
  });
  file->addAction(tr("Open &Session…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a session"), {}, tr("Nearscape sessions (*.nearscape);;All files (*)"));
    if (!path.isEmpty())
      openSession(path);
  });
  file->addAction(tr("Save Session &As…"), QKeySequence::SaveAs, this, [this] {
    if (!m_dataset) {
      showError(tr("Save Session"), tr("Open a data set first."));
      return;
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save the session"), {},
                                                tr("Nearscape sessions (*.nearscape)"));
    if (path.isEmpty())
      return;
    if (!path.endsWith(QLatin1String(".nearscape")))
      path += QLatin1String(".nearscape");
    saveSessionTo(path);
  });
  QMenu* exports = file->addMenu(tr("&Export"));
  auto saveAs = [this](const QString& title, const QString& filter,
                       const std::function<bool(const QString&)>& write) {
    if (!m_dataset) {
      showError(title, tr("Open a data set first."));
      return;
    }
    const QString path = QFileDialog::getSaveFileName(this, title, {}, filter);
    if (!path.isEmpty())
      write(path);
  };
  exports->addAction(tr("Map &Coordinates…"), this, [this, saveAs] {
    saveAs(tr("Export the map"), tr("TSV (*.tsv);;NumPy (*.npy)"),
           [this](const QString& p) { return exportMapTo(p); });
  });
  exports->addAction(tr("&Neighbours…"), this, [this, saveAs] {
    saveAs(tr("Export the neighbours"), tr("TSV (*.tsv)"),
           [this](const QString& p) { return exportNeighboursTo(p); });
  });
  exports->addAction(tr("&Path…"), this, [this, saveAs] {
    saveAs(tr("Export the path"), tr("TSV (*.tsv);;JSON (*.json)"),
           [this](const QString& p) { return exportPathTo(p); });
  });
  exports->addAction(tr("Map P&icture…"), this, [this, saveAs] {
    saveAs(tr("Export a picture of the map"), tr("PNG (*.png)"),
           [this](const QString& p) { return exportPictureTo(p); });
  });
  file->addAction(tr("Clear the &Cache"), this, [this] {
    const std::uint64_t bytes = m_cache.bytes();
    try {
      m_cache.clear();
      statusBar()->showMessage(tr("Cache cleared: %1 MB freed in %2")
                                   .arg(double(bytes) / 1e6, 0, 'f', 1)
                                   .arg(QString::fromStdString(m_cache.folder().string())),
                               8000);
    } catch (const std::exception& e) {
      showError(tr("Clear the Cache"), QString::fromUtf8(e.what()));
    }
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(tr("&Find"), QKeySequence::Find, this, [this] {
    m_searchField->setFocus();
    m_searchField->selectAll();
  });
  edit->addAction(tr("&Preferences…"), QKeySequence::Preferences, this, [this] {
    PreferencesDialog dialog(m_prefs, this);
    if (dialog.exec() == QDialog::Accepted)
      setPreferences(dialog.preferences());
  });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Reset View"), Qt::Key_Home, m_map, &MapView::resetCamera);
  m_map3D = view->addAction(tr("&3D Map"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                            [this](bool on) { setMapDimension(on ? 3 : 2); });
  m_map3D->setCheckable(true);
  // How crowded points are drawn (MapView::DensityMode; the command line's --density).
  QMenu* density = view->addMenu(tr("Point &Density"));
  density->setToolTipsVisible(true);
  auto* densityGroup = new QActionGroup(this);
  for (const auto& [mode, name, tip] :
       {std::tuple{MapView::DensityMode::Auto, tr("&Automatic"),
                   tr("A density image where points crowd the pixels, single points as you zoom "
                      "in")},
        std::tuple{MapView::DensityMode::On, tr("&Density Image"),
                   tr("Always the density image: colours mixed by count, stronger where more "
                      "points lie")},
        std::tuple{MapView::DensityMode::Off, tr("&Single Points"),
                   tr("Always every point on its own")}}) {
    QAction* a = density->addAction(name, this, [this, mode = mode] { setDensityMode(mode); });
    a->setToolTip(tip);
    a->setCheckable(true);
    a->setChecked(mode == m_map->densityMode());
    densityGroup->addAction(a);
    m_densityActions[std::size_t(mode)] = a;
  }
  QMenu* metrics = view->addMenu(tr("&Metric"));
  metrics->setToolTip(tr("The distance of the graph, the neighbours, the paths, the map and the "
                         "sweep; a file's own metric is chosen when it is opened"));
  auto* group = new QActionGroup(this);
  for (const auto& [metric, name] :
       {std::pair{Metric::L2, tr("&L2 (Euclidean)")}, std::pair{Metric::Cosine, tr("&Cosine")},
        std::pair{Metric::InnerProduct, tr("&Inner product")}}) {
    QAction* a = metrics->addAction(name, this, [this, metric = metric] { setMetric(metric); });
    a->setCheckable(true);
    group->addAction(a);
    m_metricActions[metric] = a;
  }
  updateMetricMenu();
  view->addSeparator();
  view->addAction(m_sweepDock->toggleViewAction());
  QAction* studio =
      view->addAction(tr("&Trade-off Studio"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), this,
                      &MainWindow::showTradeoffStudio);
  studio->setObjectName(QStringLiteral("tradeoffStudioAction"));
  studio->setToolTip(tr("Every sweep run overlaid full size, with the exact search as reference"));
  view->addAction(m_duplicatesDock->toggleViewAction());
  view->addAction(m_outliersDock->toggleViewAction());
  view->addAction(m_compareDock->toggleViewAction());
  m_sideBySide = view->addAction(tr("Maps &Side by Side"));
  m_sideBySide->setCheckable(true);
  m_sideBySide->setEnabled(false);
  m_sideBySide->setToolTip(tr("The compared embedding's own map beside this one (File → Compare "
                              "With…): hover, selection and paths show on both"));
  connect(m_sideBySide, &QAction::toggled, this, [this](bool on) { showMapsSideBySide(on); });
  m_map3D->setToolTip(tr("Drag to turn the map, Shift+drag to pan, wheel to zoom"));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Nearscape"), this, [this] {
    const DeviceInfo device = queryDevice(m_context.device);
    // Why there is no GPU, whatever the reason (no plugin, no driver, an old driver, …).
    const QString gpu =
        device.usable && m_context.backend != Backend::Cpu
            ? tr("GPU: %1").arg(QString::fromStdString(device.name))
            : tr("CPU engine; no GPU in use: %1")
                  .arg(m_context.backend == Backend::Cpu ? tr("the CPU backend was chosen")
                                                         : QString::fromStdString(device.reason));
    QMessageBox::about(
        this, tr("About Nearscape"),
        tr("<b>Nearscape %1</b><p>A desktop explorer for embeddings: exact and "
           "approximate kNN graphs, ANN indexes, maps and min-max paths.</p><p>%2</p>")
            .arg(QString::fromLatin1(engineVersion()), gpu.toHtmlEscaped()));
  });
}

void MainWindow::openPath(const QString& path, const QString& metaPath) {
  m_lastError.clear();
  m_warningButton->hide();
  m_dataPath = path;
  m_metaPath = metaPath;
  m_pipelineJobs->cancel();
  const Context context = m_context;
  const std::string file = path.toStdString();
  const std::string meta = metaPath.toStdString();
  m_jobs->run<Loaded>(
      tr("Opening %1").arg(QFileInfo(path).fileName()),
      [context, file, meta](JobControl& job) {
        const auto t0 = std::chrono::steady_clock::now();
        Loaded loaded;
        OpenOptions options;
        options.metaPath = meta;
        loaded.dataset = std::make_shared<Dataset>(openDataset(file, options, job));
        job.check();
        requireFinite(loaded.dataset->vectors.view(), file + ": the data");
        loaded.columns = columnChoices(*loaded.dataset, job); // read whole: not on the GUI thread
        PcaParams pca;
        pca.components = std::min<int>(3, int(loaded.dataset->dim()));
        pca.maxSampleRows = 25000; // a seeded sample fits the axes; every item is projected
        const PcaResult result = computePca(loaded.dataset->vectors.view(), pca, context, job);
        const auto& c = result.coordinates;
        loaded.pca.assign(std::size_t(3 * c.rows()), 0.0f);
        for (std::int64_t i = 0; i < c.rows(); ++i)
          for (std::int64_t j = 0; j < c.cols(); ++j)
            loaded.pca[std::size_t(3 * i + j)] = c.row(i)[j];
        loaded.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return loaded;
      },
      [this](Loaded& loaded) { showLoaded(loaded); });
}

void MainWindow::showLoaded(Loaded& loaded) {
  m_dataset = loaded.dataset;
  m_thumbnailer->setDataset(m_dataset);
  m_central->setCurrentWidget(m_maps);
  const Dataset& ds = *m_dataset;
  m_pca = std::move(loaded.pca);
  m_layouts = {};
  m_scheme = std::make_unique<ColourScheme>(labelScheme(ds));
  m_map->setPoints(pcaView(m_mapDim), m_mapDim, m_scheme->rgb);
  // Another data set's columns, and work on them still under way.
  for (JobRunner* runner : {m_searchJobs, m_colourJobs, m_opacityJobs, m_sizeJobs})
    runner->cancel();
  m_colourPending.clear();
  m_rangePending.reset();
  m_hiddenPending.clear();
  m_searchPending = m_goToFirstMatch = false;
  m_sizeColumn.clear();
  m_sizeClasses.clear();
  m_sizePending = false;
  m_opacityColumn.clear();
  m_opacityValues.clear();
  m_opacityPending = false;
  m_columnChoices = loaded.columns.colourable;
  m_numericColumns = loaded.columns.numeric;
  setWindowTitle(tr("Nearscape — %1").arg(QFileInfo(QString::fromStdString(ds.path)).fileName()));
  m_explore.reset();
  if (m_metricForced) {
    m_metric = m_chosenMetric;
    m_metricSource = tr("chosen");
  } else if (ds.metric) {
    m_metric = *ds.metric;
    m_metricSource = tr("the file's");
  } else {
    m_metric = m_chosenMetric;
    m_metricSource = m_chosenMetric == Metric::L2 ? tr("default") : tr("chosen");
  }
  updateMetricMenu();
  m_summary->setText(summaryText() + tr(" · PCA map in %1 s").arg(loaded.seconds, 0, 'f', 2));
  m_sweep->setDataset(m_dataset);
  m_sweep->setMetric(m_metric);
  m_duplicates->setMetric(m_metric);
  m_duplicates->setDataset(m_dataset);
  m_outlierPanel->setMetric(m_metric);
  m_outlierPanel->setDataset(m_dataset);
  m_compare->setDataset(m_dataset, m_metric);
  showMapsSideBySide(false);
  m_panelColumns.clear();
  m_selected = -1;
  m_lastPath = {};
  m_neighbours->clear();
  m_pathStrip->clear();
  refreshColourChoices();
  m_matches.clear();
  m_searching = false;
  m_selection.clear();
  refreshSelectionPanel();
  if (!m_searchField->text().isEmpty())
    setSearch(m_searchField->text(), m_regexBox->isChecked()); // the search carries over
  showSchemeKey();
  if (m_pendingSession && !applySessionToData())
    return;
  if (!ds.warnings.empty()) // a sidecar of other data, skipped; a one-column file's header
    showWarnings(ds.warnings);
  emit mapShown();
  startExploration();
}

void MainWindow::startExploration() {
  auto dataset = m_dataset;
  if (!dataset)
    return;
  if (dataset->size() < 2) { // no neighbours to find: the PCA map is all there is
    m_summary->setText(summaryText() + tr(" · one item: no graph, no refined map"));
    QTimer::singleShot(0, this, &MainWindow::explorationFinished);
    return;
  }
  const int graphK = int(std::min<std::int64_t>(m_prefs.graphK, dataset->size() - 1));
  const GraphMethod askedMethod = m_prefs.graphMethod;
  const Context context = m_context;
  const Metric metric = m_metric;
  const int dim = m_mapDim;
  // One copy of the start, shared by the job and the layout it starts (no copies at 10M items).
  const auto start = std::make_shared<const std::vector<float>>(pcaView(dim));
  QPointer<MainWindow> self(this);
  m_pipelineJobs->run<std::shared_ptr<Exploration>>(
      tr("Exploring"),
      [dataset, context, start, dim, self, graphK, askedMethod, metric,
       cache = m_cache](JobControl& job) {
        auto e = std::make_shared<Exploration>();
        e->dataset = dataset;
        e->graphK = graphK;
        e->metric = metric;
        e->layoutDim = dim;
        // The map and the paths need a kNN graph: exact where that is the cheaper way (small data
        // sets), NN-Descent beyond (GNND on a GPU). Clicked items always get exact neighbours.
        // What was computed for this data before comes back from the cache, verified.
        e->method =
            resolveGraphMethod(askedMethod, dataset->size(), dataset->dim(), graphK, context);
        // Auto keeps its own key: on a GPU it may take STEP's exact graph where the shape says
        // NN-Descent (clustered data), which only the data tells.
        e->graphKey = graphKey(askedMethod == GraphMethod::Auto ? askedMethod : e->method, graphK,
                               context.seed);
        e->graphMethod = e->method == GraphMethod::Exact            ? "exact"
                         : resolveBackend(context) == Backend::Cuda ? "GNND"
                                                                    : "NN-Descent";
        ExploreStages stages;
        addMapStages(stages, self, dataset, cache, mapKey(e->graphKey, metric, dim), dim, start);
        stages.graph = [&](const nearscape::Exploration&) {
          return cache.loadGraph(*dataset, metric, e->graphKey);
        };
        stages.onStage = [&, storeMap = stages.onStage](ExploreStage stage,
                                                        const nearscape::Exploration& so) {
          if (stage == ExploreStage::Graph && !so.graphSupplied)
            cache.storeGraph(*dataset, metric, e->graphKey, so.graph);
          storeMap(stage, so);
        };
        nearscape::Exploration done = nearscape::explore(
            dataset->vectors.view(),
            guiExploreParams(graphK, askedMethod == GraphMethod::Auto ? askedMethod : e->method,
                             metric, dim),
            context, job, stages);
        if (!done.graphSupplied && done.method != e->method) { // auto found clusters that prune
          e->method = done.method;
          e->graphMethod = "exact (STEP)";
        }
        e->graph = std::move(done.graph);
        e->graphCached = done.graphSupplied;
        e->index = std::move(done.neighbours);
        e->layout.assign(done.map.data(), done.map.data() + done.map.view().size());
        e->layoutCached = done.mapSupplied;
        e->forest = std::move(done.forest);
        e->graphSeconds = done.seconds.graph + done.seconds.neighbours;
        e->layoutSeconds = done.seconds.start + done.seconds.map;
        e->mstSeconds = done.seconds.forest;
        return e;
      },
      [this](std::shared_ptr<Exploration>& e) {
        if (e->dataset != m_dataset)
          return;
        m_explore = e;
        if (e->layoutCached && m_mapDim == e->layoutDim) // nothing streamed it: show it now
          m_map->movePoints(e->layout, !m_map->userMovedCamera());
        // Kept once: the exploration itself no longer needs it.
        m_layouts[std::size_t(e->layoutDim == 3)] = std::move(e->layout);
        const QString cached = tr(" (cached)");
        m_summary->setText(summaryText() + tr(" · %1 %2-NN graph %3 s%4 · map %5 s%6 · MST %7 s")
                                               .arg(QString::fromStdString(e->graphMethod))
                                               .arg(e->graphK)
                                               .arg(e->graphSeconds, 0, 'f', 1)
                                               .arg(e->graphCached ? cached : QString())
                                               .arg(e->layoutSeconds, 0, 'f', 1)
                                               .arg(e->layoutCached ? cached : QString())
                                               .arg(e->mstSeconds, 0, 'f', 2));
        m_summary->setToolTip(QString::fromStdString(e->graph.report.describe()));
        refreshColourChoices(); // the computed columns need the graph
        applyPendingSession();  // what needs the graph: a computed colouring, the item, the path
        if (m_selectionWaitsForGraph && m_selected >= 0)
          selectItem(m_selected); // clicked while the graph was being built: list them now
        emit layoutFinished(e->layoutDim);
        emit explorationFinished();
        if (!mapRefined(m_mapDim)) // the person turned to the other dimension meanwhile
          startLayout(m_mapDim);
      });
}

void MainWindow::addMapStages(ExploreStages& stages, const QPointer<MainWindow>& self,
                              const std::shared_ptr<const Dataset>& dataset,
                              const ArtefactCache& cache, const std::string& mapKey, int dim,
                              const std::shared_ptr<const std::vector<float>>& start) {
  const std::string what = "map" + std::to_string(dim) + "d";
  stages.map = [dataset, cache, what, mapKey, dim](const nearscape::Exploration&) {
    return cache.loadMatrix(*dataset, what, mapKey, dim);
  };
  stages.start = [dataset, start, dim](const nearscape::Exploration&) {
    return std::optional(Matrix<float>(start->data(), dataset->size(), dim, start)); // a view
  };
  // The refining map's positions for the screen: one slot holding the latest, handed over when
  // the GUI thread gets to it. However slow the screen (millions of points), at most one copy
  // waits: intermediate ones are overwritten, never queued.
  struct Latest {
    std::mutex mutex;
    std::vector<float> positions;
    bool posted = false; ///< a hand-over is queued and has not taken the slot yet
  };
  auto latest = std::make_shared<Latest>();
  stages.onLayout = [self, dataset, dim, latest](const MatrixView<float>& positions, double) {
    {
      const std::lock_guard lock(latest->mutex);
      latest->positions.assign(positions.data, positions.data + positions.rows * positions.cols);
      if (latest->posted)
        return;
      latest->posted = true;
    }
    QMetaObject::invokeMethod(
        self.data(),
        [self, dataset, dim, latest] {
          std::vector<float> taken;
          {
            const std::lock_guard lock(latest->mutex);
            taken.swap(latest->positions);
            latest->posted = false;
          }
          if (self && self->m_dataset == dataset && self->m_mapDim == dim)
            self->m_map->movePoints(taken, !self->m_map->userMovedCamera());
        },
        Qt::QueuedConnection);
  };
  stages.onStage = [dataset, cache, what, mapKey](ExploreStage stage,
                                                  const nearscape::Exploration& e) {
    if (stage == ExploreStage::Map && !e.mapSupplied)
      cache.storeMatrix(*dataset, what, mapKey, e.map.view());
  };
}

std::vector<float> MainWindow::pcaView(int dim) const {
  const std::size_t n = m_pca.size() / 3;
  std::vector<float> view(n * std::size_t(dim));
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      view[i * std::size_t(dim) + std::size_t(c)] = m_pca[3 * i + std::size_t(c)];
  return view;
}

void MainWindow::setMapDimension(int dim) {
  dim = dim == 3 ? 3 : 2;
  if (m_map3D && m_map3D->isChecked() != (dim == 3))
    m_map3D->setChecked(dim == 3);
  if (dim == m_mapDim)
    return;
  m_mapDim = dim;
  if (!m_dataset)
    return;
  const bool refined = mapRefined(dim);
  m_map->setPositions(refined ? m_layouts[std::size_t(dim == 3)] : pcaView(dim), dim);
  refreshColourChoices();          // map trust is offered for refined maps
  if (colourBy() == trustColumn()) // it belongs to the other map: back to the labels
    setColourBy(QStringLiteral("label"));
  // Without a graph yet, the exploration's end starts this layout.
  if (!refined && m_explore)
    startLayout(dim);
}

void MainWindow::setDensityMode(MapView::DensityMode mode) {
  m_map->setDensityMode(mode);
  if (QAction* action = m_densityActions[std::size_t(mode)]; action && !action->isChecked())
    action->setChecked(true);
}

void MainWindow::startLayout(int dim) {
  if (!m_explore || !m_dataset)
    return;
  auto explore = m_explore;
  auto dataset = m_dataset;
  const Context context = m_context;
  const auto start = std::make_shared<const std::vector<float>>(pcaView(dim));
  QPointer<MainWindow> self(this);
  m_pipelineJobs->run<std::vector<float>>(
      tr("Mapping in %1D").arg(dim),
      [current = explore, dataset, context, start, dim, self, cache = m_cache](JobControl& job) {
        // The map alone, from the exploration's graph.
        ExploreParams params =
            guiExploreParams(current->graphK, current->method, current->metric, dim);
        params.neighbours = false;
        params.forest = false;
        ExploreStages stages;
        addMapStages(stages, self, dataset, cache, mapKey(current->graphKey, current->metric, dim),
                     dim, start);
        stages.graph = supply(current->graph);
        const Matrix<float> map =
            nearscape::explore(dataset->vectors.view(), params, context, job, stages).map;
        return std::vector<float>(map.data(), map.data() + map.view().size());
      },
      [this, dataset, dim](std::vector<float>& layout) {
        if (m_dataset != dataset)
          return;
        m_layouts[std::size_t(dim == 3)] = std::move(layout);
        if (m_mapDim == dim)
          m_map->movePoints(m_layouts[std::size_t(dim == 3)], !m_map->userMovedCamera());
        refreshColourChoices(); // map trust, for this map
        emit layoutFinished(dim);
      });
}

void MainWindow::onMapClicked(std::int64_t item, Qt::KeyboardModifiers modifiers) {
  if (item < 0)
    return;
  if ((modifiers & (Qt::ControlModifier | Qt::ShiftModifier)) && m_selected >= 0)
    showPathTo(item);
  else
    selectItem(item);
}

void MainWindow::selectItem(std::int64_t item) {
  if (!m_dataset || item < 0 || item >= m_dataset->size())
    return;
  m_selected = item;
  m_sweep->setSelectedItem(item);
  m_lastPath = {};
  m_pathStrip->clear();
  m_neighbours->clear();
  setMapOverlay(item, {}, {});
  m_selectionWaitsForGraph = !m_explore;
  if (!m_explore) {
    statusBar()->showMessage(
        tr("Item %1 selected; its neighbours appear once the kNN graph is built.").arg(item), 8000);
    return;
  }
  // Exact neighbours in the original space, off the GUI thread; the item itself is dropped.
  auto explore = m_explore;
  auto dataset = m_dataset;
  const int shown = m_prefs.shownNeighbours;
  m_jobs->run<KnnResult>(
      tr("Neighbours of %1").arg(item),
      [explore, dataset, item, shown](JobControl& job) {
        const int k = int(std::min<std::int64_t>(shown + 1, dataset->size()));
        return explore->index->search({dataset->vectors.row(item), 1, dataset->dim()}, k, job);
      },
      [this, item, dataset, shown](KnnResult& nn) {
        if (m_selected != item || m_dataset != dataset)
          return;
        std::vector<std::int32_t> ids;
        std::vector<QString> captions;
        for (std::int64_t c = 0; c < nn.ids.cols() && int(ids.size()) < shown; ++c) {
          if (nn.ids.row(0)[c] == item)
            continue;
          ids.push_back(nn.ids.row(0)[c]);
          captions.push_back(tr("distance %1").arg(double(nn.distances.row(0)[c]), 0, 'g', 4));
        }
        // Where the map lies: true neighbours placed beyond the item's own ids.size()-th
        // nearest point on the map are marked, and linked to it by faint lines.
        const std::vector<std::int32_t> far = farInMap(item, ids);
        for (std::size_t i = 0; i < ids.size(); ++i)
          if (std::find(far.begin(), far.end(), ids[i]) != far.end())
            captions[i] += tr(" · far in map");
        m_neighbours->setItems(*m_dataset, ids, captions);
        m_shownNeighboursOf = item;
        m_shownNeighbours = ids;
        m_shownDistances.clear();
        for (std::int64_t c = 0; c < nn.ids.cols(); ++c)
          if (nn.ids.row(0)[c] != item && int(m_shownDistances.size()) < shown)
            m_shownDistances.push_back(nn.distances.row(0)[c]);
        if (!m_lastPath.nodes.empty())
          return; // a path is on screen: keep its overlay and message
        setMapOverlay(item, ids, {}, far);
        statusBar()->showMessage(
            tr("Item %1: its %2 exact nearest neighbours%3. Ctrl+click another item for the "
               "smoothest path.")
                .arg(item)
                .arg(ids.size())
                .arg(far.empty() ? QString()
                                 : tr(", %1 of them far in the map (faint lines)").arg(far.size())),
            8000);
      });
}

std::vector<std::int32_t> MainWindow::farInMap(std::int64_t item,
                                               const std::vector<std::int32_t>& neighbours) const {
  const int dim = m_mapDim;
  if (!mapRefined(dim) || neighbours.empty() || !m_dataset)
    return {};
  const std::vector<float>& map = m_layouts[std::size_t(dim == 3)];
  const std::int64_t n = m_dataset->size();
  auto mapDistance2 = [&](std::int64_t a, std::int64_t b) {
    double s = 0;
    for (int c = 0; c < dim; ++c) {
      const double diff =
          double(map[std::size_t(a * dim + c)]) - double(map[std::size_t(b * dim + c)]);
      s += diff * diff;
    }
    return s;
  };
  // The item's k-th nearest other point on the map (k = the neighbours listed): one pass.
  std::vector<double> all;
  all.reserve(std::size_t(n));
  for (std::int64_t j = 0; j < n; ++j)
    if (j != item)
      all.push_back(mapDistance2(item, j));
  const std::size_t k = std::min(neighbours.size(), all.size()) - 1;
  std::nth_element(all.begin(), all.begin() + std::ptrdiff_t(k), all.end());
  const double radius2 = all[k];
  std::vector<std::int32_t> far;
  for (const std::int32_t id : neighbours)
    if (mapDistance2(item, id) > radius2)
      far.push_back(id);
  return far;
}

void MainWindow::bridgeComponentsAndRetry(std::int64_t retryTo) {
  if (!m_explore)
    return;
  auto explore = m_explore;
  m_pipelineJobs->run<std::shared_ptr<Exploration>>(
      tr("Joining components"),
      [current = explore, context = m_context](JobControl& job) {
        auto e = std::make_shared<Exploration>(*current);
        // The forest again, of the graph with its components joined.
        ExploreParams params = guiExploreParams(e->graphK, e->method, e->metric, e->layoutDim);
        params.neighbours = false;
        params.map = false;
        params.bridge = true;
        ExploreStages stages;
        stages.graph = supply(e->graph);
        nearscape::Exploration joined =
            nearscape::explore(e->dataset->vectors.view(), params, context, job, stages);
        e->forest = std::move(joined.forest);
        return e;
      },
      [this, retryTo](std::shared_ptr<Exploration>& e) {
        if (e->dataset != m_dataset)
          return;
        m_explore = e;
        statusBar()->showMessage(tr("Components joined: the graph is connected."), 5000);
        if (retryTo >= 0 && m_selected >= 0)
          showPathTo(retryTo);
      });
}

void MainWindow::showPathTo(std::int64_t item) {
  if (!m_explore || m_selected < 0 || item < 0 || item >= m_dataset->size())
    return;
  m_lastPath = minimaxPath(*m_explore->forest, std::int32_t(m_selected), std::int32_t(item));
  if (!m_lastPath.found()) {
    const int components = int(m_explore->forest->treeCount());
    statusBar()->showMessage(tr("Items %1 and %2 lie in different components of the kNN graph.")
                                 .arg(m_selected)
                                 .arg(item),
                             8000);
    auto* ask = new QMessageBox(
        QMessageBox::Question, tr("No path"),
        tr("Items %1 and %2 lie in different components of the kNN graph (%3 components).\n\n"
           "Join the components with their exact nearest cross-component edges and try again?")
            .arg(m_selected)
            .arg(item)
            .arg(components),
        QMessageBox::Yes | QMessageBox::No, this);
    ask->setAttribute(Qt::WA_DeleteOnClose);
    connect(ask, &QMessageBox::finished, this, [this, item](int result) {
      if (result == QMessageBox::Yes)
        bridgeComponentsAndRetry(item);
    });
    ask->open();
    emit componentsDisconnected(m_selected, item, components);
    return;
  }
  std::vector<QString> captions;
  std::vector<bool> bottleneck;
  for (std::size_t i = 0; i < m_lastPath.nodes.size(); ++i) {
    captions.push_back(i == 0 ? tr("start")
                              : tr("step %1").arg(double(m_lastPath.steps[i - 1]), 0, 'g', 4));
    bottleneck.push_back(i > 0 && std::int64_t(i - 1) == m_lastPath.bottleneckIndex);
  }
  m_pathStrip->setItems(*m_dataset, m_lastPath.nodes, captions, bottleneck);
  setMapOverlay(m_selected, {}, m_lastPath.nodes);
  statusBar()->showMessage(tr("Smoothest path %1 → %2: %3 steps, largest step %4 (bold)")
                               .arg(m_selected)
                               .arg(item)
                               .arg(m_lastPath.steps.size())
                               .arg(double(m_lastPath.bottleneck), 0, 'g', 4),
                           10000);
}

void MainWindow::showTradeoffStudio() {
  m_studio->show();
  m_studio->raise();
  m_studio->activateWindow();
}

void MainWindow::showMissed(std::int64_t query, const std::vector<std::int32_t>& missed,
                            const QString& setting) {
  if (!m_dataset || query < 0 || query >= m_dataset->size())
    return;
  std::vector<QString> captions(missed.size(), tr("missed by %1").arg(setting));
  m_neighbours->setItems(*m_dataset, missed, captions);
  setMapOverlay(query, missed, {});
  m_lastPath = {};
  m_pathStrip->clear();
  statusBar()->showMessage(
      missed.empty() ? tr("%1 finds every true neighbour of item %2.").arg(setting).arg(query)
                     : tr("%1 misses %2 true neighbours of item %3: listed and ringed.")
                           .arg(setting)
                           .arg(missed.size())
                           .arg(query),
      10000);
}

void MainWindow::setMetric(Metric metric) {
  m_chosenMetric = metric;
  if (!m_dataset || metric == m_metric) {
    updateMetricMenu();
    return;
  }
  m_metric = metric;
  m_metricSource = tr("chosen");
  updateMetricMenu();
  m_sweep->setMetric(metric);
  m_duplicates->setMetric(metric);
  m_outlierPanel->setMetric(metric);
  m_compare->setDataset(m_dataset, metric);
  showMapsSideBySide(false);
  m_panelColumns.clear();
  restartExploration();
}

void MainWindow::restartExploration() {
  // Everything built from the old graph goes; the PCA map (metric-free) stays on screen.
  m_pipelineJobs->cancel();
  m_explore.reset();
  m_layouts = {};
  m_selected = -1;
  m_lastPath = {};
  m_neighbours->clear();
  m_pathStrip->clear();
  setMapOverlay(-1, {}, {});
  m_map->setPositions(pcaView(m_mapDim), m_mapDim);
  m_summary->setText(summaryText());
  startExploration();
}

void MainWindow::updateBackendText() {
  // The status bar names the backend; why there is no GPU goes in its tooltip and the About box.
  const DeviceInfo device = queryDevice(m_context.device);
  const QString name = QString::fromStdString(device.name);
  m_backendText = !device.usable || m_context.backend == Backend::Cpu
                      ? tr("CPU, %1 threads").arg(effectiveThreads(m_context))
                  : m_context.devices.size() > 1
                      ? tr("%1 GPUs: %2").arg(m_context.devices.size()).arg(name)
                      : tr("GPU: %1").arg(name);
  m_summary->setToolTip(QString::fromStdString(describeBackend(m_context)));
  if (!m_dataset)
    m_summary->setText(tr("No data · %1").arg(m_backendText));
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
    statusBar()->showMessage(tr("GPUs: %1").arg(QString::fromStdString(e.what())), 8000);
  }
  updateBackendText();
  m_sweep->setContext(m_context);
  m_duplicates->setContext(m_context);
  m_outlierPanel->setContext(m_context);
  m_compare->setContext(m_context);
  m_cache = ArtefactCache(ArtefactCache::defaultFolder(), m_prefs.cacheBytes());
  m_thumbnailer->setDiskCache(std::make_shared<const ArtefactCache>(m_cache));
  if (!m_dataset)
    return;
  if (old.graphK != m_prefs.graphK || old.graphMethod != m_prefs.graphMethod ||
      old.backend != m_prefs.backend || old.devices != m_prefs.devices)
    restartExploration(); // the graph and what stands on it
  else if (old.shownNeighbours != m_prefs.shownNeighbours && m_selected >= 0)
    selectItem(m_selected);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  m_searchJobs->cancel(); // a closed window's search is of no use (the other jobs: ~MainWindow)
  QSettings().setValue("window/geometry", saveGeometry());
  QMainWindow::closeEvent(event);
}

void MainWindow::forceMetric(Metric metric) {
  m_metricForced = true;
  setMetric(metric);
}

void MainWindow::updateMetricMenu() {
  for (const auto& [metric, action] : m_metricActions)
    action->setChecked(metric == m_metric);
}

QString MainWindow::summaryText() const {
  if (!m_dataset)
    return tr("No data · %1").arg(m_backendText);
  return tr("n = %L1 · d = %2 · %3 (%4) · %5")
      .arg(m_dataset->size())
      .arg(m_dataset->dim())
      .arg(QString::fromUtf8(metricName(m_metric).data(), qsizetype(metricName(m_metric).size())))
      .arg(m_metricSource)
      .arg(m_backendText);
}

void MainWindow::attachMetadataFile(const QString& metaPath) {
  if (!m_dataset)
    return;
  m_metaPath = metaPath;
  auto current = m_dataset;
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
      [this](Attached& attached) {
        m_warningButton->hide();
        m_dataset = attached.dataset;
        m_thumbnailer->setDataset(m_dataset);
        // The old metadata's columns, and work on them still under way.
        for (JobRunner* runner : {m_colourJobs, m_opacityJobs, m_sizeJobs})
          runner->cancel();
        m_colourPending.clear();
        m_rangePending.reset();
        m_hiddenPending.clear();
        m_opacityColumn.clear();
        m_opacityValues.clear();
        m_sizeColumn.clear();
        m_sizeClasses.clear();
        m_opacityPending = m_sizePending = false;
        m_map->setSizeClasses(m_sizeClasses);
        m_columnChoices = attached.columns.colourable;
        m_numericColumns = attached.columns.numeric;
        m_scheme = std::make_unique<ColourScheme>(labelScheme(*m_dataset));
        refreshColourChoices();
        showSchemeKey();
        if (!m_searchText.isEmpty()) // the search now looks at the new columns
          setSearch(m_searchText, m_searchRegex);
        if (!m_dataset->warnings.empty())
          showWarnings(m_dataset->warnings);
      });
}

void MainWindow::applyVisibility() {
  if (m_dataset && m_scheme && m_scheme->numeric &&
      m_scheme->values.size() == std::size_t(m_dataset->size())) {
    const double from = m_rangeFrom->value(), to = m_rangeTo->value();
    if (from <= m_scheme->minimum && to >= m_scheme->maximum) {
      setMapVisible({}); // the whole range: every item, those without a value too
      return;
    }
    std::vector<bool> visible(m_scheme->values.size());
    for (std::size_t i = 0; i < visible.size(); ++i)
      visible[i] = m_scheme->values[i] >= from && m_scheme->values[i] <= to; // NaN: hidden
    setMapVisible(std::move(visible));
    return;
  }
  if (!m_dataset || !m_scheme || m_scheme->numeric || m_scheme->group.empty()) {
    setMapVisible({});
    return;
  }
  const std::vector<bool> groupVisible = m_legend->visibleLabels();
  if (groupVisible.size() != m_scheme->groupNames.size())
    return;
  std::vector<bool> visible(static_cast<std::size_t>(m_dataset->size()));
  for (std::size_t i = 0; i < visible.size(); ++i)
    visible[i] = groupVisible[std::size_t(m_scheme->group[i])];
  setMapVisible(std::move(visible));
}

void MainWindow::buildExploreBar() {
  QToolBar* bar = addToolBar(tr("Explore"));
  bar->setObjectName(QStringLiteral("exploreBar"));
  bar->setMovable(false);
  // What a left drag does on the map.
  auto* tools = new QActionGroup(this);
  const std::array<std::pair<QString, QKeySequence>, 3> names = {
      std::pair{tr("Pan"), QKeySequence(Qt::Key_P)},
      std::pair{tr("Lasso"), QKeySequence(Qt::Key_L)},
      std::pair{tr("Rectangle"), QKeySequence(Qt::Key_R)}};
  for (int t = 0; t < 3; ++t) {
    QAction* a = bar->addAction(names[std::size_t(t)].first, this, [this, t] { setDragTool(t); });
    a->setCheckable(true);
    a->setShortcut(names[std::size_t(t)].second);
    a->setToolTip(t == 0 ? tr("Drag to pan (3D: to turn) — P")
                         : tr("Drag to select; Shift adds, Alt removes — %1")
                               .arg(names[std::size_t(t)].second.toString()));
    tools->addAction(a);
    m_toolActions[std::size_t(t)] = a;
  }
  m_toolActions[0]->setChecked(true);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Colour by "), bar));
  m_colourBox = new QComboBox(bar);
  m_colourBox->setObjectName(QStringLiteral("colourBy"));
  m_colourBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_colourBox->setToolTip(tr("Colour the map by the labels, any metadata column or a computed "
                             "column: categories get distinct colours, numbers a colour map"));
  bar->addWidget(m_colourBox);
  connect(m_colourBox, &QComboBox::textActivated, this,
          [this](const QString& name) { setColourBy(name); });
  bar->addWidget(new QLabel(tr(" Opacity "), bar));
  m_opacityBox = new QComboBox(bar);
  m_opacityBox->setObjectName(QStringLiteral("opacityBy"));
  m_opacityBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_opacityBox->setToolTip(tr("Fade items by a numeric column: the largest value opaque, the "
                              "smallest faint"));
  m_opacityBox->addItem(tr("none"));
  bar->addWidget(m_opacityBox);
  connect(m_opacityBox, &QComboBox::textActivated, this,
          [this](const QString& name) { setOpacityBy(name); });
  bar->addWidget(new QLabel(tr(" Size "), bar));
  m_sizeBox = new QComboBox(bar);
  m_sizeBox->setObjectName(QStringLiteral("sizeBy"));
  m_sizeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_sizeBox->setToolTip(tr("Draw items larger by a numeric column: four sizes from its smallest "
                           "value to its largest"));
  m_sizeBox->addItem(tr("none"));
  bar->addWidget(m_sizeBox);
  connect(m_sizeBox, &QComboBox::textActivated, this,
          [this](const QString& name) { setSizeBy(name); });
  bar->addSeparator();
  m_searchField = new QLineEdit(bar);
  m_searchField->setObjectName(QStringLiteral("search"));
  m_searchField->setPlaceholderText(tr("Find an id or text (Ctrl+F)"));
  m_searchField->setClearButtonEnabled(true);
  m_searchField->setMinimumWidth(240);
  bar->addWidget(m_searchField);
  m_regexBox = new QCheckBox(tr("regex"), bar);
  m_regexBox->setObjectName(QStringLiteral("regex"));
  m_regexBox->setToolTip(tr("Match a regular expression instead of a plain substring"));
  bar->addWidget(m_regexBox);
  m_matchLabel = new QLabel(bar);
  m_matchLabel->setObjectName(QStringLiteral("matches"));
  m_matchLabel->setTextFormat(Qt::PlainText);
  m_matchLabel->setMinimumWidth(120);
  bar->addWidget(m_matchLabel);
  // A search over long values or with a costly expression can take seconds: it can be stopped.
  m_searchStop = new QToolButton(bar);
  m_searchStop->setObjectName(QStringLiteral("searchStop"));
  m_searchStop->setIcon(style()->standardIcon(QStyle::SP_BrowserStop));
  m_searchStop->setToolTip(tr("Stop the search (Esc)"));
  m_searchStop->setAutoRaise(true);
  m_searchStop->setEnabled(false); // shown always: appearing, it would re-lay the bar and map
  bar->addWidget(m_searchStop);
  connect(m_searchStop, &QToolButton::clicked, this, &MainWindow::cancelSearch);
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), m_searchField);
  escape->setContext(Qt::WidgetShortcut);
  connect(escape, &QShortcut::activated, this, &MainWindow::cancelSearch);
  // Enabled while any search job runs (a stopped one may still be ending when the next starts).
  connect(m_searchJobs, &JobRunner::started, this, [this] { m_searchStop->setEnabled(true); });
  for (auto ended : {&JobRunner::finished, &JobRunner::cancelled})
    connect(m_searchJobs, ended, this, [this] { m_searchStop->setEnabled(m_searchJobs->busy()); });
  auto* typing = new QTimer(this); // search as one types, once the typing pauses
  typing->setSingleShot(true);
  typing->setInterval(150);
  connect(m_searchField, &QLineEdit::textEdited, typing, qOverload<>(&QTimer::start));
  connect(m_searchField, &QLineEdit::textChanged, this, [this, typing](const QString& text) {
    if (text.isEmpty()) // the clear button
      typing->start();
  });
  connect(typing, &QTimer::timeout, this,
          [this] { setSearch(m_searchField->text(), m_regexBox->isChecked()); });
  connect(m_regexBox, &QCheckBox::toggled, this,
          [this](bool on) { setSearch(m_searchField->text(), on); });
  connect(m_searchField, &QLineEdit::returnPressed, this, [this, typing] {
    typing->stop();
    // A search already asked for (or done) is not run again.
    if (m_searchField->text() != m_searchText || m_regexBox->isChecked() != m_searchRegex ||
        (!m_searchPending && !m_searching && !m_searchText.isEmpty()))
      setSearch(m_searchField->text(), m_regexBox->isChecked());
    goToFirstMatch();
  });
  // A long search says how far it got.
  connect(m_searchJobs, &JobRunner::progress, this, [this](double fraction, const QString&) {
    if (m_searchPending)
      m_matchLabel->setText(tr("searching… %1%").arg(int(100 * fraction)));
  });
  connect(m_searchJobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    m_searchStop->setEnabled(m_searchJobs->busy());
    m_searchPending = false;
    m_matchLabel->setText(tr("search failed"));
    showError(tr("Find"), message);
  });
}

void MainWindow::buildSelectionDock() {
  auto* dock = new QDockWidget(tr("Selection"), this);
  dock->setObjectName(QStringLiteral("selectionDock"));
  auto* panel = new QWidget(dock);
  auto* layout = new QVBoxLayout(panel);
  m_selectionSummary = new QLabel(panel);
  m_selectionSummary->setTextFormat(Qt::PlainText); // labels come from files
  m_selectionSummary->setWordWrap(true);
  m_selectionSummary->setObjectName(QStringLiteral("selectionSummary"));
  layout->addWidget(m_selectionSummary);
  auto* buttons = new QHBoxLayout;
  auto addButton = [&](const QString& text, const QString& tip, auto action) {
    auto* b = new QToolButton(panel);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, this, action);
    buttons->addWidget(b);
  };
  addButton(tr("Clear"), tr("Select nothing"), [this] { setSelection({}); });
  addButton(tr("Invert"), tr("Select everything not selected"), [this] { invertSelection(); });
  addButton(tr("+ Neighbours"), tr("Add each selected item's graph neighbours"),
            [this] { growSelection(); });
  addButton(tr("Export…"), tr("The selected items and their metadata, as TSV"), [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the selection"), {}, tr("TSV (*.tsv)"));
    if (!path.isEmpty())
      exportSelectionTo(path);
  });
  buttons->addStretch();
  layout->addLayout(buttons);
  m_selectionList = new ItemStrip(false, panel);
  m_selectionList->setThumbnailer(m_thumbnailer);
  layout->addWidget(m_selectionList, 1);
  connect(m_selectionList, &ItemStrip::itemChosen, this,
          [this](std::int32_t item) { selectItem(item); });
  dock->setWidget(panel);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  tabifyDockWidget(m_legendDock, dock);
  m_legendDock->raise();
  m_selectionDock = dock;
  connect(m_map, &MapView::selectionDrawn, this, &MainWindow::onSelectionDrawn);
  refreshSelectionPanel();
}

void MainWindow::setDragTool(int tool) {
  tool = std::clamp(tool, 0, 2);
  m_map->setDragTool(MapView::DragTool(tool));
  m_toolActions[std::size_t(tool)]->setChecked(true);
}

void MainWindow::onSelectionDrawn(const QPolygonF& polygon, Qt::KeyboardModifiers modifiers) {
  const std::vector<std::int64_t> inside = m_map->itemsInside(polygon);
  std::vector<std::int64_t> result;
  if (modifiers & Qt::ShiftModifier)
    std::set_union(m_selection.begin(), m_selection.end(), inside.begin(), inside.end(),
                   std::back_inserter(result));
  else if (modifiers & Qt::AltModifier)
    std::set_difference(m_selection.begin(), m_selection.end(), inside.begin(), inside.end(),
                        std::back_inserter(result));
  else
    result = inside;
  setSelection(std::move(result));
  m_selectionDock->raise(); // what was drawn: its count, labels and items
}

void MainWindow::setSelection(std::vector<std::int64_t> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  if (m_dataset)
    items.erase(std::remove_if(items.begin(), items.end(),
                               [n = m_dataset->size()](std::int64_t i) { return i < 0 || i >= n; }),
                items.end());
  else
    items.clear();
  m_selection = std::move(items);
  refreshSelectionPanel();
  recolour();
}

void MainWindow::invertSelection() {
  if (!m_dataset)
    return;
  std::vector<std::int64_t> rest;
  std::size_t at = 0;
  for (std::int64_t i = 0; i < m_dataset->size(); ++i) {
    if (at < m_selection.size() && m_selection[at] == i)
      ++at;
    else
      rest.push_back(i);
  }
  setSelection(std::move(rest));
}

void MainWindow::growSelection() {
  if (!m_explore) {
    statusBar()->showMessage(tr("The neighbours come from the kNN graph, which is not built yet."),
                             6000);
    return;
  }
  std::vector<std::int64_t> grown = m_selection;
  const MatrixView<std::int32_t> ids = m_explore->graph.ids.view();
  for (const std::int64_t item : m_selection)
    for (std::int64_t c = 0; c < ids.cols; ++c)
      if (ids.row(item)[c] >= 0)
        grown.push_back(ids.row(item)[c]);
  setSelection(std::move(grown));
}

bool MainWindow::exportSelectionTo(const QString& path) {
  if (!m_dataset || m_selection.empty())
    return false;
  return runExport(tr("selection"),
                   [&] { exportSelection(path, *m_dataset, m_selection, inputFiles()); });
}

void MainWindow::refreshSelectionPanel() {
  if (m_selection.empty()) {
    m_selectionSummary->setText(tr("Nothing selected. Choose Lasso (L) or Rectangle (R) in the "
                                   "toolbar and drag on the map; Shift adds, Alt removes."));
    m_selectionList->clear();
    return;
  }
  // How the selection splits by label: the most frequent first.
  std::map<std::string, std::int64_t> byLabel;
  for (const std::int64_t item : m_selection)
    ++byLabel[m_dataset->labelOf(item)];
  std::vector<std::pair<std::int64_t, std::string>> ranked;
  for (const auto& [label, count] : byLabel)
    ranked.push_back({-count, label});
  std::sort(ranked.begin(), ranked.end());
  QString text = m_selection.size() == 1 ? tr("1 item selected")
                                         : tr("%L1 items selected").arg(m_selection.size());
  for (std::size_t i = 0; i < ranked.size() && i < 8; ++i)
    text += QStringLiteral("\n  %1: %2")
                .arg(ranked[i].second.empty() ? tr("(no label)")
                                              : QString::fromStdString(ranked[i].second))
                .arg(-ranked[i].first);
  if (ranked.size() > 8)
    text += tr("\n  … %1 more labels").arg(ranked.size() - 8);
  m_selectionSummary->setText(text);
  constexpr std::size_t kListed = 500; // the list is for browsing; the export holds them all
  std::vector<std::int32_t> listed;
  for (std::size_t i = 0; i < m_selection.size() && i < kListed; ++i)
    listed.push_back(std::int32_t(m_selection[i]));
  m_selectionList->setItems(*m_dataset, listed, std::vector<QString>(listed.size()));
}

Session MainWindow::currentSession() const {
  Session s;
  s.data = m_dataPath;
  s.metadata = m_metaPath;
  if (m_dataset)
    s.contentHash = m_dataset->contentHash;
  s.metric = std::string(metricName(m_metric));
  s.colourBy = m_colourPending.isEmpty() ? colourBy() : m_colourPending;
  s.searchText = m_searchField->text();
  s.searchRegex = m_regexBox->isChecked();
  if (!m_colourPending.isEmpty()) {
    s.hidden = m_hiddenPending;
  } else if (m_scheme && !m_scheme->numeric) {
    const std::vector<bool> shown = m_legend->visibleLabels();
    for (std::size_t g = 0; g < shown.size() && g < m_scheme->groupNames.size(); ++g)
      if (!shown[g])
        s.hidden << QString::fromStdString(m_scheme->groupNames[g]);
  }
  s.shownRange = shownRange();
  s.selection = m_selection;
  s.selected = m_selected;
  s.pathTo = m_lastPath.found() ? m_lastPath.nodes.back() : -1;
  s.dim = m_mapDim;
  if (m_dataset)
    s.camera = m_map->camera();
  s.windowState = saveState();
  return s;
}

bool MainWindow::saveSessionTo(const QString& path) {
  if (!m_dataset)
    return false;
  // The opened session is no input here: saving over it is how a session is updated.
  return runExport(tr("session"), [&] {
    currentSession().write(path, m_compare->otherPath().isEmpty()
                                     ? QStringList()
                                     : QStringList{m_compare->otherPath()});
  });
}

void MainWindow::openSession(const QString& path) {
  try {
    m_pendingSession = Session::read(path);
  } catch (const std::exception& e) {
    showError(tr("Open Session"), QString::fromUtf8(e.what()));
    return;
  }
  m_sessionPath = path;
  // The session's metric wins over the file's, for this opening.
  if (const auto metric = parseMetric(m_pendingSession->metric)) {
    m_chosenMetric = *metric;
    m_metricForced = true;
  }
  setMapDimension(m_pendingSession->dim);
  openPath(m_pendingSession->data, m_pendingSession->metadata);
}

bool MainWindow::applySessionToData() {
  const Session s = *m_pendingSession;
  if (!s.contentHash.empty() && s.contentHash != m_dataset->contentHash) {
    m_pendingSession.reset();
    m_metricForced = false;
    showError(tr("Open Session"),
              tr("%1 is a session of other data: %2 has changed since it was saved (its content "
                 "hash differs)")
                  .arg(m_sessionPath, s.data));
    return false;
  }
  m_metricForced = false; // later files get their own metric again
  if (!s.colourBy.isEmpty() && colourChoices().contains(s.colourBy))
    setColourBy(s.colourBy);
  if (!m_colourPending.isEmpty()) // a column read in the background: its groups, once read
    m_hiddenPending = s.hidden;
  for (int g = 0; m_colourPending.isEmpty() && m_scheme && !m_scheme->numeric &&
                  g < int(m_scheme->groupNames.size());
       ++g)
    if (s.hidden.contains(QString::fromStdString(m_scheme->groupNames[std::size_t(g)])))
      m_legend->setLabelVisible(g, false);
  if (s.shownRange)
    setShownRange(s.shownRange->first, s.shownRange->second);
  if (!s.searchText.isEmpty())
    setSearch(s.searchText, s.searchRegex);
  setSelection(s.selection);
  if (!s.windowState.isEmpty())
    restoreState(s.windowState);
  return true;
}

void MainWindow::applyPendingSession() {
  if (!m_pendingSession)
    return;
  const Session s = *m_pendingSession;
  m_pendingSession.reset();
  if (s.colourBy != colourBy() && !setColourBy(s.colourBy)) // a computed column needs the graph
    showError(tr("Open Session"),
              tr("%1: no column '%2' to colour by").arg(m_sessionPath, s.colourBy));
  if (s.camera && s.dim == m_mapDim)
    m_map->setCamera(*s.camera);
  if (s.selected >= 0 && s.selected < m_dataset->size()) {
    selectItem(s.selected);
    if (s.pathTo >= 0 && s.pathTo < m_dataset->size())
      showPathTo(s.pathTo);
  }
}

QStringList MainWindow::colourChoices() const {
  QStringList choices;
  if (!m_dataset)
    return choices;
  choices << QStringLiteral("label") << m_columnChoices;
  if (m_explore)
    choices << tr("distance to the %1th neighbour").arg(m_explore->graphK);
  if (m_explore && mapRefined(m_mapDim))
    choices << trustColumn();
  if (m_explore)
    choices << outlierColumn();
  for (const auto& [name, values] : m_panelColumns)
    choices << name;
  return choices;
}

QStringList MainWindow::opacityChoices() const {
  return m_dataset ? m_numericColumns : QStringList();
}

bool MainWindow::setOpacityBy(const QString& name) {
  if (!m_dataset)
    return false;
  if (name == tr("none") || name.isEmpty()) {
    m_opacityJobs->cancel();
    m_opacityPending = false;
    m_opacityColumn.clear();
    m_opacityValues.clear();
    recolour();
  } else {
    if (!opacityChoices().contains(name))
      return false;
    // The column is read in the background; the old fading stays until it arrives.
    m_opacityColumn = name;
    m_opacityPending = true;
    auto dataset = m_dataset;
    const int column = dataset->metadata.findColumn(name.toStdString());
    m_opacityJobs->run<std::vector<double>>(
        tr("Opacity by %1").arg(name),
        [dataset, column](JobControl& job) { return readColumn(*dataset, column, job).numbers; },
        [this, dataset, name](std::vector<double>& values) {
          if (m_dataset != dataset || m_opacityColumn != name)
            return; // asked for other data, or another column since
          m_opacityPending = false;
          m_opacityValues = std::move(values);
          recolour();
        });
  }
  m_opacityBox->setCurrentText(m_opacityColumn.isEmpty() ? tr("none") : m_opacityColumn);
  return true;
}

bool MainWindow::setSizeBy(const QString& name) {
  if (!m_dataset)
    return false;
  if (name == tr("none") || name.isEmpty()) {
    m_sizeJobs->cancel();
    m_sizePending = false;
    m_sizeColumn.clear();
    m_sizeClasses.clear();
    m_map->setSizeClasses(m_sizeClasses);
  } else {
    if (!opacityChoices().contains(name)) // the same numeric columns
      return false;
    // The column is read in the background; the old sizes stay until it arrives.
    m_sizeColumn = name;
    m_sizePending = true;
    auto dataset = m_dataset;
    const int column = dataset->metadata.findColumn(name.toStdString());
    m_sizeJobs->run<std::vector<std::uint8_t>>(
        tr("Size by %1").arg(name),
        [dataset, column](JobControl& job) {
          return sizeClasses(readColumn(*dataset, column, job).numbers);
        },
        [this, dataset, name](std::vector<std::uint8_t>& classes) {
          if (m_dataset != dataset || m_sizeColumn != name)
            return; // asked for other data, or another column since
          m_sizePending = false;
          m_sizeClasses = std::move(classes);
          m_map->setSizeClasses(m_sizeClasses);
        });
  }
  m_sizeBox->setCurrentText(m_sizeColumn.isEmpty() ? tr("none") : m_sizeColumn);
  return true;
}

QString MainWindow::outlierColumn() const {
  return tr("outlier score (LOF, exact 10-NN)");
}

QString MainWindow::trustColumn() const {
  return tr("map trust (exact 10-NN kept)");
}

bool MainWindow::setShownRange(double from, double to) {
  if (!(from <= to))
    return false;
  if (!m_colourPending.isEmpty()) {
    // Waits for the colouring under way: computed columns are numbers; a metadata column is
    // when its every value is.
    const bool metadataColumn =
        m_dataset && m_dataset->metadata.findColumn(m_colourPending.toStdString()) >= 0;
    if (metadataColumn && !m_numericColumns.contains(m_colourPending))
      return false;
    m_rangePending = std::pair{from, to};
    return true;
  }
  if (!m_scheme || !m_scheme->numeric)
    return false;
  const QSignalBlocker blockFrom(m_rangeFrom), blockTo(m_rangeTo);
  m_rangeFrom->setMinimum(std::min(m_rangeFrom->minimum(), from));
  m_rangeTo->setMaximum(std::max(m_rangeTo->maximum(), to));
  m_rangeFrom->setValue(from);
  m_rangeTo->setValue(to);
  applyVisibility();
  return true;
}

std::optional<std::pair<double, double>> MainWindow::shownRange() const {
  if (!m_colourPending.isEmpty())
    return m_rangePending;
  if (!m_scheme || !m_scheme->numeric ||
      (m_rangeFrom->value() <= m_scheme->minimum && m_rangeTo->value() >= m_scheme->maximum))
    return std::nullopt;
  return std::pair{m_rangeFrom->value(), m_rangeTo->value()};
}

QString MainWindow::colourBy() const {
  return m_scheme ? m_scheme->name : QString();
}

void MainWindow::refreshColourChoices() {
  // m_columnChoices and m_numericColumns were found when the data or metadata was read (a
  // column is read whole: not here, on the GUI thread).
  const QString current = m_colourPending.isEmpty() ? colourBy() : m_colourPending;
  m_colourBox->clear();
  m_colourBox->addItems(colourChoices());
  m_colourBox->setCurrentText(current);
  const QString opacity = opacityBy();
  m_opacityBox->clear();
  m_opacityBox->addItems(QStringList{tr("none")} + opacityChoices());
  if (!opacityChoices().contains(opacity))
    setOpacityBy(tr("none"));
  m_opacityBox->setCurrentText(opacity.isEmpty() ? tr("none") : opacity);
  const QString size = sizeBy();
  m_sizeBox->clear();
  m_sizeBox->addItems(QStringList{tr("none")} + opacityChoices());
  if (!opacityChoices().contains(size))
    setSizeBy(tr("none"));
  m_sizeBox->setCurrentText(size.isEmpty() ? tr("none") : size);
}

bool MainWindow::setColourBy(const QString& name) {
  if (!m_dataset || !colourChoices().contains(name))
    return false;
  // A colouring asked for before and still under way is not wanted any more, nor what waited
  // for it; the same one asked again (its result arriving) keeps them.
  if (name != m_colourPending) {
    m_rangePending.reset();
    m_hiddenPending.clear();
  }
  m_colourPending.clear();
  m_colourJobs->cancel();
  m_colourBox->setCurrentText(name);
  const Dataset& ds = *m_dataset;
  if (name == QStringLiteral("label")) {
    showScheme(std::make_unique<ColourScheme>(labelScheme(ds)));
  } else if (const int column = ds.metadata.findColumn(name.toStdString()); column >= 0) {
    // A column is read whole (millions of items take seconds): in the background.
    m_colourPending = name;
    auto dataset = m_dataset;
    m_colourJobs->run<std::shared_ptr<ColourScheme>>(
        tr("Colouring by %1").arg(name),
        [dataset, column](JobControl& job) {
          return std::make_shared<ColourScheme>(columnScheme(*dataset, column, job));
        },
        [this, dataset, name](std::shared_ptr<ColourScheme>& scheme) {
          if (m_dataset != dataset || m_colourPending != name)
            return; // asked for other data, or another colouring since
          m_colourPending.clear();
          showScheme(std::make_unique<ColourScheme>(std::move(*scheme)));
        });
  } else if (const auto panel = m_panelColumns.find(name); panel != m_panelColumns.end()) {
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, panel->second)));
  } else if (name == outlierColumn()) {
    // The local outlier factor needs each item's exact 10-NN (the graph's, when it is exact):
    // computed in the background once per graph, then coloured.
    if (m_outliers.explore != m_explore.get() || m_outliers.values.empty()) {
      m_colourPending = name;
      computeOutliers();
      return true;
    }
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, m_outliers.values)));
  } else if (name == trustColumn()) {
    // Map trust needs each item's exact 10-NN (the graph's, when it is exact) and the map's:
    // computed in the background once per map, then coloured.
    Trust& trust = m_trust[std::size_t(m_mapDim == 3)];
    const std::vector<float>& map = m_layouts[std::size_t(m_mapDim == 3)];
    if (trust.map != map.data() || trust.values.empty()) {
      m_colourPending = name;
      computeTrust();
      return true;
    }
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, trust.values)));
    statusBar()->showMessage(
        tr("Map trust: on average %1% of an item's exact 10 nearest neighbours are among its 10 "
           "nearest on this map")
            .arg(100 * trust.mean, 0, 'f', 1),
        10000);
  } else { // the computed column: how far each item's k-th neighbour lies
    const MatrixView<float> d = m_explore->graph.distances.view();
    std::vector<double> values(std::size_t(d.rows));
    for (std::int64_t i = 0; i < d.rows; ++i)
      values[std::size_t(i)] = d.row(i)[d.cols - 1];
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, values)));
  }
  return true;
}

void MainWindow::showScheme(std::unique_ptr<ColourScheme> scheme) {
  m_scheme = std::move(scheme);
  m_colourBox->setCurrentText(m_scheme->name);
  showSchemeKey();
  // What waited for this colouring (a session's hidden groups and range).
  for (int g = 0; !m_scheme->numeric && g < int(m_scheme->groupNames.size()); ++g)
    if (m_hiddenPending.contains(QString::fromStdString(m_scheme->groupNames[std::size_t(g)])))
      m_legend->setLabelVisible(g, false);
  m_hiddenPending.clear();
  if (const auto range = std::exchange(m_rangePending, std::nullopt))
    setShownRange(range->first, range->second);
}

void MainWindow::computeTrust() {
  const int dim = m_mapDim;
  const std::vector<float>& map = m_layouts[std::size_t(dim == 3)];
  auto dataset = m_dataset;
  const KnnResult graph = m_explore->graph; // shares its storage
  const Metric metric = m_explore->metric;
  const Context context = m_context;
  auto positions = std::make_shared<std::vector<float>>(map);
  const float* mapId = map.data();
  m_trustJobs->run<LayoutQuality>(
      tr("Map trust"),
      [dataset, graph, metric, context, positions, dim](JobControl& job) {
        constexpr int k = 10;
        const bool exact = graph.report.exact() && graph.ids.cols() >= k;
        const KnnResult truth =
            exact ? graph : knnGraph(dataset->vectors.view(), k, metric, context, job);
        return layoutQuality(truth.ids.view(), {positions->data(), dataset->size(), dim}, k,
                             effectiveThreads(context));
      },
      [this, dataset, dim, mapId](LayoutQuality& q) {
        if (m_dataset != dataset || m_layouts[std::size_t(dim == 3)].data() != mapId)
          return; // computed for a map no longer shown
        Trust& trust = m_trust[std::size_t(dim == 3)];
        trust.map = mapId;
        trust.values.assign(q.perItem.begin(), q.perItem.end());
        trust.mean = q.overall;
        if (m_colourPending == trustColumn() && m_mapDim == dim)
          setColourBy(trustColumn());
      });
}

void MainWindow::computeOutliers() {
  auto dataset = m_dataset;
  const KnnResult graph = m_explore->graph; // shares its storage
  const Metric metric = m_explore->metric;
  const Context context = m_context;
  const void* explore = m_explore.get();
  m_trustJobs->run<std::vector<float>>(
      tr("Outlier scores"),
      [dataset, graph, metric, context](JobControl& job) {
        constexpr int k = 10;
        const bool exact = graph.report.exact() && graph.ids.cols() >= k;
        const KnnResult truth =
            exact ? graph : knnGraph(dataset->vectors.view(), k, metric, context, job);
        return localOutlierFactor(truth.ids.view(), truth.distances.view(), k);
      },
      [this, explore](std::vector<float>& lof) {
        if (m_explore.get() != explore)
          return; // computed for a graph no longer shown
        m_outliers.explore = explore;
        m_outliers.values.assign(lof.begin(), lof.end());
        if (m_colourPending == outlierColumn())
          setColourBy(outlierColumn());
      });
}

void MainWindow::setSearch(const QString& text, bool regex) {
  if (m_searchField->text() != text)
    m_searchField->setText(text);
  if (m_regexBox->isChecked() != regex) {
    const QSignalBlocker block(m_regexBox);
    m_regexBox->setChecked(regex);
  }
  m_searchText = text;
  m_searchRegex = regex;
  m_goToFirstMatch = false;
  if (text.isEmpty() || !m_dataset) {
    m_searchJobs->cancel();
    m_searchPending = false;
    m_matches.clear();
    m_searching = false;
    m_matchLabel->clear();
    recolour();
    emit searchFinished();
    return;
  }
  // Every item's every column is looked at: in the background, so that typing and the map stay
  // responsive with millions of items. Starting a search stops the one running and drops its
  // result; the last matches stay shown until the new ones arrive.
  struct Found {
    std::vector<std::int64_t> matches;
    QString error; ///< an invalid regular expression
  };
  m_searchPending = true;
  m_matchLabel->setText(tr("searching…"));
  m_matchLabel->setToolTip({});
  auto dataset = m_dataset;
  const std::string needle = text.toStdString();
  const MatchMode mode = regex ? MatchMode::Regex : MatchMode::Substring;
  m_searchJobs->run<Found>(
      tr("Searching"),
      [dataset, needle, mode](JobControl& job) {
        Found found;
        try {
          found.matches = findItems(*dataset, needle, mode, job);
        } catch (const InvalidArgument& e) {
          found.error = QString::fromStdString(e.what());
        }
        return found;
      },
      [this, dataset](Found& found) {
        if (m_dataset != dataset || !m_searchPending)
          return; // searched other data, or stopped (cancelSearch) or cleared since
        m_searchPending = false;
        m_searching = true;
        m_matches = std::move(found.matches);
        if (found.error.isEmpty()) {
          m_matchLabel->setText(m_matches.size() == 1 ? tr("1 match")
                                                      : tr("%L1 matches").arg(m_matches.size()));
        } else {
          m_matchLabel->setText(tr("invalid expression"));
          m_matchLabel->setToolTip(found.error); // the status bar's message goes away
          statusBar()->showMessage(found.error, 8000);
        }
        recolour();
        if (std::exchange(m_goToFirstMatch, false))
          goToFirstMatch();
        emit searchFinished();
      });
}

void MainWindow::cancelSearch() {
  if (!m_searchPending)
    return;
  m_searchJobs->cancel(); // findItems looks for the stop before every item
  m_searchPending = m_goToFirstMatch = false;
  m_matches.clear();
  m_searching = false;
  m_matchLabel->setText(tr("search stopped"));
  recolour();
  emit searchFinished();
}

void MainWindow::goToFirstMatch() {
  if (m_searchPending) {
    m_goToFirstMatch = true; // once the search ends
    return;
  }
  if (m_matches.empty())
    return;
  selectItem(m_matches.front());
  m_map->centreOn(m_matches.front());
}

bool MainWindow::viewPending() const {
  return m_searchPending || !m_colourPending.isEmpty() || m_opacityPending || m_sizePending ||
         m_compare->running();
}

void MainWindow::showWarnings(const std::vector<std::string>& warnings) {
  QStringList lines;
  for (const std::string& warning : warnings)
    lines << QString::fromStdString(warning);
  const QString text = lines.join(QStringLiteral("\n"));
  // In the status bar for a while, and behind its warning sign until other data or metadata
  // is opened: a long message does not fit the bar.
  m_warningText = text;
  // Rich text, escaped: the warnings quote the files, whose text could look like markup.
  m_warningButton->setToolTip(
      QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(text.toHtmlEscaped()));
  m_warningButton->setText(warnings.size() == 1 ? tr("warning")
                                                : tr("%1 warnings").arg(warnings.size()));
  m_warningButton->show();
  statusBar()->showMessage(lines.join(QStringLiteral(" · ")), 30000);
}

void MainWindow::recolour() {
  if (!m_dataset || !m_scheme)
    return;
  // Bright: the selection when there is one, else the search's matches; the rest fade.
  const bool selecting = !m_selection.empty();
  const std::vector<std::uint8_t> rgb =
      m_opacityValues.empty() ? m_scheme->rgb
                              : fadedBy(m_scheme->rgb, m_opacityValues, MapView::backgroundColor());
  setMapColors(selecting     ? dimmedExcept(rgb, m_selection, MapView::backgroundColor())
               : m_searching ? dimmedExcept(rgb, m_matches, MapView::backgroundColor())
                             : rgb);
  applyVisibility();
}

void MainWindow::showSchemeKey() {
  if (!m_scheme)
    return;
  if (m_scheme->numeric) {
    m_legend->clear();
    m_legend->hide();
    m_colorBar->setRange(m_scheme->name, m_scheme->minimum, m_scheme->maximum);
    m_colorBar->show();
    // The filter starts at the whole range (the boxes span it and a margin, for typing).
    const QSignalBlocker blockFrom(m_rangeFrom), blockTo(m_rangeTo);
    const double margin = std::max(1.0, m_scheme->maximum - m_scheme->minimum);
    for (QDoubleSpinBox* box : {m_rangeFrom, m_rangeTo})
      box->setRange(m_scheme->minimum - margin, m_scheme->maximum + margin);
    m_rangeFrom->setValue(m_scheme->minimum);
    m_rangeTo->setValue(m_scheme->maximum);
    m_rangeFilter->show();
  } else {
    m_colorBar->hide();
    m_rangeFilter->hide();
    m_legend->show();
    m_legend->setLabels(m_scheme->groupNames, m_scheme->groupCounts, m_scheme->groupColors);
  }
  recolour();
}

bool MainWindow::runExport(const QString& what, const std::function<void()>& write) {
  try {
    write();
    statusBar()->showMessage(tr("%1 exported").arg(what), 5000);
    return true;
  } catch (const std::exception& e) {
    showError(tr("Export %1").arg(what), QString::fromUtf8(e.what()));
    return false;
  }
}

bool MainWindow::exportMapTo(const QString& path) {
  if (!m_dataset)
    return false;
  return runExport(tr("map"), [&] {
    exportMap(path, *m_dataset, m_map->positions(), m_map->dim(), inputFiles());
  });
}

bool MainWindow::exportNeighboursTo(const QString& path) {
  if (!m_dataset || m_shownNeighbours.empty())
    return false;
  return runExport(tr("neighbours"), [&] {
    exportNeighbours(path, *m_dataset, m_shownNeighboursOf, m_shownNeighbours, m_shownDistances,
                     inputFiles());
  });
}

bool MainWindow::exportPathTo(const QString& path) {
  if (!m_dataset || !m_lastPath.found())
    return false;
  return runExport(tr("path"), [&] { exportPath(path, *m_dataset, m_lastPath, inputFiles()); });
}

bool MainWindow::exportPictureTo(const QString& path) {
  if (!m_dataset)
    return false;
  return runExport(tr("picture"), [&] {
    exportPicture(path, *m_dataset, m_map->grabFramebuffer(), inputFiles());
  });
}

QStringList MainWindow::inputFiles() const {
  QStringList inputs = inputsOf(m_dataPath);
  for (const QString& file : {m_metaPath, m_sessionPath, m_compare->otherPath()})
    if (!file.isEmpty())
      inputs << file;
  return inputs;
}

void MainWindow::showHover(std::int64_t item, const QPoint& globalPos) {
  if (item < 0 || !m_dataset) {
    m_hoverCard->hide();
    return;
  }
  m_hoverCard->showItem(*m_dataset, item, m_thumbnailer->thumbnail(item), globalPos);
}

void MainWindow::setMapOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                               const std::vector<std::int32_t>& path,
                               const std::vector<std::int32_t>& far) {
  m_overlay = {selected, neighbours, path, far};
  m_map->setOverlay(selected, neighbours, path, far);
  if (m_otherMap->isVisible()) // far links are the first map's: where that map tears
    m_otherMap->setOverlay(selected, neighbours, path);
}

void MainWindow::linkHover(const MapView* from, std::int64_t item) {
  if (!m_otherMap->isVisible())
    return;
  // The hovered item ringed on the other map (as if selected there), until the mouse leaves it.
  MapView* to = from == m_map ? m_otherMap : m_map;
  const Overlay& o = m_overlay;
  to->setOverlay(item >= 0 ? item : o.selected, o.neighbours, o.path,
                 to == m_map && item < 0 ? o.far : std::vector<std::int32_t>{});
}

void MainWindow::setMapColors(const std::vector<std::uint8_t>& rgb) {
  m_map->setColors(rgb);
  if (m_otherMap->pointCount() == m_map->pointCount())
    m_otherMap->setColors(rgb);
}

void MainWindow::setMapVisible(std::vector<bool> visible) {
  if (m_otherMap->pointCount() == m_map->pointCount())
    m_otherMap->setVisibleMask(visible);
  m_map->setVisibleMask(std::move(visible));
}

void MainWindow::showOtherMap() {
  const std::vector<float>& positions = m_compare->otherMap();
  if (!m_dataset || positions.size() != std::size_t(m_dataset->size()) * 2)
    return;
  const std::vector<std::uint8_t> grey(std::size_t(m_dataset->size()) * 3, 160);
  m_otherMap->setPoints(positions, 2, grey);
  m_sideBySide->setEnabled(true);
  showMapsSideBySide(true);
}

bool MainWindow::showMapsSideBySide(bool on) {
  const bool available =
      m_dataset && m_otherMap->pointCount() == m_dataset->size() && !m_compare->otherMap().empty();
  on = on && available;
  if (!available)
    m_sideBySide->setEnabled(false);
  {
    const QSignalBlocker block(m_sideBySide);
    m_sideBySide->setChecked(on);
  }
  m_otherMap->setVisible(on);
  // The map's width changed: refit both once the splitter has laid them out (unless the user
  // moved the camera).
  QTimer::singleShot(0, this, [this] {
    if (!m_map->userMovedCamera())
      m_map->resetCamera();
    if (m_otherMap->isVisible())
      m_otherMap->resetCamera();
  });
  if (on) {
    m_maps->setSizes({m_maps->width() / 2, m_maps->width() - m_maps->width() / 2});
    recolour(); // the same colours, dimming and hidden groups on both
    setMapOverlay(m_overlay.selected, m_overlay.neighbours, m_overlay.path, m_overlay.far);
    statusBar()->showMessage(
        tr("Left: this embedding's map; right: %1's own map — the same items, linked.")
            .arg(QFileInfo(m_compare->otherPath()).fileName()),
        8000);
  }
  return on;
}

void MainWindow::showError(const QString& title, const QString& message) {
  m_lastError = message;
  statusBar()->showMessage(title + QStringLiteral(": ") + message, 10000);
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setTextFormat(Qt::PlainText); // messages quote file names and contents: never rich text
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open(); // not exec(): the GUI keeps running
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

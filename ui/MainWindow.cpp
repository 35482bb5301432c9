#include "MainWindow.h"

#include "Colors.h"
#include "HoverCard.h"
#include "JobRunner.h"
#include "LegendPanel.h"
#include "MapView.h"

#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>

namespace nearscape::ui {

struct MainWindow::Loaded {
  std::shared_ptr<Dataset> dataset;
  std::vector<float> xy; ///< n × 2 PCA coordinates
  double seconds = 0;
};

MainWindow::MainWindow(Context context, QWidget* parent)
    : QMainWindow(parent), m_context(context), m_map(new MapView(this)),
      m_legend(new LegendPanel(this)), m_hoverCard(new HoverCard(this)),
      m_jobs(new JobRunner(this)), m_summary(new QLabel(this)), m_progress(new QProgressBar(this)),
      m_cancel(new QToolButton(this)) {
  setWindowTitle(tr("Nearscape"));
  setAcceptDrops(true);
  setCentralWidget(m_map);
  auto* dock = new QDockWidget(tr("Classes"), this);
  dock->setObjectName(QStringLiteral("legendDock"));
  dock->setWidget(m_legend);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, dock);

  m_backendText = QString::fromStdString(describeBackend(m_context));
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
  connect(m_cancel, &QToolButton::clicked, m_jobs, &JobRunner::cancel);

  // A progress bar only for work that lasts: it appears after ~150 ms.
  auto* showTimer = new QTimer(this);
  showTimer->setSingleShot(true);
  showTimer->setInterval(150);
  connect(showTimer, &QTimer::timeout, this, [this] {
    if (m_jobs->busy()) {
      m_progress->show();
      m_cancel->show();
    }
  });
  connect(m_jobs, &JobRunner::started, this, [this, showTimer](const QString& title) {
    m_progress->setValue(0);
    m_progress->setFormat(title + QStringLiteral(" %p%"));
    showTimer->start();
  });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_progress->setValue(int(fraction * 1000));
    if (!message.isEmpty())
      m_progress->setFormat(message + QStringLiteral(" %p%"));
  });
  auto hideProgress = [this] {
    if (!m_jobs->busy()) {
      m_progress->hide();
      m_cancel->hide();
    }
  };
  connect(m_jobs, &JobRunner::finished, this, hideProgress);
  connect(m_jobs, &JobRunner::cancelled, this, [this, hideProgress](const QString& title) {
    hideProgress();
    statusBar()->showMessage(tr("%1: cancelled").arg(title), 5000);
  });
  connect(m_jobs, &JobRunner::failed, this,
          [this, hideProgress](const QString& title, const QString& message) {
            hideProgress();
            showError(title, message);
          });

  connect(m_legend, &LegendPanel::visibilityChanged, this, &MainWindow::applyVisibility);
  connect(m_map, &MapView::hovered, this, &MainWindow::showHover);
  buildMenus();
  resize(1200, 800);
}

MainWindow::~MainWindow() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open File…"), QKeySequence::Open, this, [this] {
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
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Reset View"), Qt::Key_Home, m_map, &MapView::resetCamera);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Nearscape"), this, [this] {
    const DeviceInfo device = queryDevice(m_context.device);
    QString gpu = device.usable ? tr("GPU: %1").arg(QString::fromStdString(device.name))
                  : device.compiledWithCuda
                      ? tr("Built with CUDA; no GPU in use: %1")
                            .arg(QString::fromStdString(device.reason))
                      : tr("Built without CUDA: the CPU engine only.");
    QMessageBox::about(this, tr("About Nearscape"),
                       tr("<b>Nearscape %1</b><p>A desktop explorer for embeddings: exact and "
                          "approximate kNN graphs, ANN indexes, maps and min-max paths.</p><p>%2</p>")
                           .arg(QString::fromLatin1(engineVersion()), gpu.toHtmlEscaped()));
  });
}

void MainWindow::openPath(const QString& path, const QString& metaPath) {
  m_lastError.clear();
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
        requireFinite(loaded.dataset->vectors.view(), "the data");
        PcaParams pca;
        pca.components = std::min<int>(2, int(loaded.dataset->dim()));
        pca.maxSampleRows = 25000; // a seeded sample fits the axes; every item is projected
        const PcaResult result = computePca(loaded.dataset->vectors.view(), pca, context, job);
        const auto& c = result.coordinates;
        loaded.xy.resize(std::size_t(2 * c.rows()));
        for (std::int64_t i = 0; i < c.rows(); ++i) {
          loaded.xy[2 * i] = c.row(i)[0];
          loaded.xy[2 * i + 1] = c.cols() > 1 ? c.row(i)[1] : 0.0f;
        }
        loaded.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return loaded;
      },
      [this](Loaded& loaded) { showLoaded(loaded); });
}

void MainWindow::showLoaded(Loaded& loaded) {
  m_dataset = loaded.dataset;
  const Dataset& ds = *m_dataset;
  m_map->setPoints(loaded.xy, itemColors(ds.labels, ds.size()));
  std::vector<qint64> counts(ds.labelNames.size(), 0);
  for (const auto label : ds.labels)
    ++counts[std::size_t(label)];
  m_legend->setLabels(ds.labelNames, counts);
  setWindowTitle(tr("Nearscape — %1").arg(QFileInfo(QString::fromStdString(ds.path)).fileName()));
  m_summary->setText(summaryText() + tr(" · PCA map in %1 s").arg(loaded.seconds, 0, 'f', 2));
  emit mapShown();
}

QString MainWindow::summaryText() const {
  if (!m_dataset)
    return tr("No data · %1").arg(m_backendText);
  return tr("n = %L1 · d = %2 · %3").arg(m_dataset->size()).arg(m_dataset->dim()).arg(m_backendText);
}

void MainWindow::attachMetadataFile(const QString& metaPath) {
  if (!m_dataset)
    return;
  auto current = m_dataset;
  const std::string meta = metaPath.toStdString();
  m_jobs->run<std::shared_ptr<Dataset>>(
      tr("Reading metadata"),
      [current, meta](JobControl&) {
        auto updated = std::make_shared<Dataset>(*current);
        attachMetadata(*updated, readMetadataTsv(meta, current->size()), meta);
        return updated;
      },
      [this](std::shared_ptr<Dataset>& updated) {
        m_dataset = updated;
        const Dataset& ds = *m_dataset;
        std::vector<qint64> counts(ds.labelNames.size(), 0);
        for (const auto label : ds.labels)
          ++counts[std::size_t(label)];
        m_legend->setLabels(ds.labelNames, counts);
        m_map->setColors(itemColors(ds.labels, ds.size()));
        applyVisibility();
      });
}

void MainWindow::applyVisibility() {
  if (!m_dataset || !m_dataset->hasLabels())
    return;
  const std::vector<bool> labelVisible = m_legend->visibleLabels();
  std::vector<bool> visible(static_cast<std::size_t>(m_dataset->size()));
  for (std::size_t i = 0; i < visible.size(); ++i)
    visible[i] = labelVisible[std::size_t(m_dataset->labels[i])];
  m_map->setVisibleMask(std::move(visible));
}

void MainWindow::showHover(std::int64_t item, const QPoint& globalPos) {
  if (item < 0 || !m_dataset) {
    m_hoverCard->hide();
    return;
  }
  m_hoverCard->showItem(*m_dataset, item, globalPos);
}

void MainWindow::showError(const QString& title, const QString& message) {
  m_lastError = message;
  statusBar()->showMessage(title + QStringLiteral(": ") + message, 10000);
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
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

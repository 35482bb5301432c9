#include "TradeoffStudio.h"

#include "Export.h"
#include "JobRunner.h"
#include "StudyPlot.h"
#include "SweepPanel.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

namespace nearscape::ui {

namespace {

QIcon swatch(const QColor& colour) {
  QPixmap pixmap(14, 14);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(colour);
  p.drawEllipse(QRectF(1, 1, 12, 12));
  return QIcon(pixmap);
}

} // namespace

TradeoffStudio::TradeoffStudio(SweepPanel* panel, QWidget* parent)
    : QWidget(parent, Qt::Window), m_panel(panel),
      m_throughput(new StudyPlot(StudyChart::Measure::Throughput, this)),
      m_latency(new StudyPlot(StudyChart::Measure::Latency, this)), m_runs(new QListWidget(this)),
      m_run(new QPushButton(tr("Run sweep"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_remove(new QPushButton(tr("Remove run"), this)),
      m_clear(new QPushButton(tr("Clear all"), this)),
      m_exportPng(new QPushButton(tr("Export PNG…"), this)),
      m_exportCsv(new QPushButton(tr("Export CSV…"), this)), m_next(new QLabel(this)),
      m_reference(new QLabel(this)), m_details(new QLabel(this)), m_status(new QLabel(this)) {
  setWindowTitle(tr("Trade-off Studio — Nearscape"));
  setObjectName(QStringLiteral("tradeoffStudio"));
  for (QLabel* label : {m_next, m_reference, m_details, m_status}) {
    label->setTextFormat(Qt::PlainText); // error messages quote paths
    label->setWordWrap(true);
  }
  m_details->setMinimumHeight(3 * m_details->fontMetrics().lineSpacing() + 4);
  m_details->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_run->setToolTip(tr("Build the index set in the Index sweep dock and sweep it: a new run, in "
                       "its own colour, over the same queries"));
  m_remove->setToolTip(tr("Remove the run chosen in the list"));
  m_clear->setToolTip(tr("Remove every run: the next run begins a new study (its queries hold "
                         "out the item selected then)"));
  m_runs->setSelectionMode(QAbstractItemView::SingleSelection);
  m_runs->setMinimumWidth(260);
  m_runs->setWordWrap(true);
  m_runs->setTextElideMode(Qt::ElideNone);

  auto* top = new QHBoxLayout;
  top->addWidget(m_run);
  top->addWidget(m_cancel);
  top->addWidget(m_next, 1);
  top->addWidget(m_exportPng);
  top->addWidget(m_exportCsv);

  auto* side = new QWidget(this);
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(new QLabel(tr("Runs (one colour each)"), side));
  sideLayout->addWidget(m_runs, 1);
  auto* runButtons = new QHBoxLayout;
  runButtons->addWidget(m_remove);
  runButtons->addWidget(m_clear);
  sideLayout->addLayout(runButtons);
  sideLayout->addWidget(m_reference);

  auto* plots = new QSplitter(Qt::Vertical, this);
  plots->addWidget(m_throughput);
  plots->addWidget(m_latency);
  plots->setStretchFactor(0, 3);
  plots->setStretchFactor(1, 2);
  auto* body = new QSplitter(Qt::Horizontal, this);
  body->addWidget(side);
  body->addWidget(plots);
  body->setStretchFactor(0, 0);
  body->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(body, 1);
  layout->addWidget(m_details);
  layout->addWidget(m_status);
  resize(1250, 860);

  connect(m_run, &QPushButton::clicked, m_panel, &SweepPanel::startSweep);
  connect(m_cancel, &QPushButton::clicked, m_panel->jobs(), &JobRunner::cancel);
  connect(m_remove, &QPushButton::clicked, this, [this] {
    if (m_runs->currentRow() >= 0)
      m_panel->removeRun(m_runs->currentRow());
  });
  connect(m_clear, &QPushButton::clicked, m_panel, &SweepPanel::clearStudy);
  connect(m_exportPng, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the study as a picture"),
                                     QStringLiteral("tradeoffs.png"), tr("PNG pictures (*.png)"));
    if (!path.isEmpty())
      exportPng(path);
  });
  connect(m_exportCsv, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the study as CSV"), QStringLiteral("tradeoffs.csv"), tr("CSV (*.csv)"));
    if (!path.isEmpty())
      exportCsv(path);
  });
  connect(m_panel, &SweepPanel::studyChanged, this, &TradeoffStudio::refresh);
  connect(m_panel, &SweepPanel::controlsChanged, this, &TradeoffStudio::refresh);
  connect(m_panel->jobs(), &JobRunner::progress, this,
          [this](double fraction, const QString& message) {
            m_status->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
          });
  connect(m_panel->jobs(), &JobRunner::failed, this,
          [this](const QString&, const QString& message) {
            m_status->setText(tr("Sweep failed: %1").arg(message));
          });
  connect(m_panel->jobs(), &JobRunner::finished, this,
          [this] { m_status->setText(tr("Sweep done.")); });
  for (StudyPlot* plot : {m_throughput, m_latency}) {
    connect(plot, &StudyPlot::pointHovered, this, [this](int run, int row) {
      showDetails(run >= 0 ? run : m_chosen.first, run >= 0 ? row : m_chosen.second);
    });
    connect(plot, &StudyPlot::pointChosen, this, [this](int run, int row) {
      m_chosen = {run, row};
      m_throughput->setChosen(run, row);
      m_latency->setChosen(run, row);
      m_runs->setCurrentRow(run);
      showDetails(run, row);
      m_panel->chooseStudyPoint(run, row); // rings its missed neighbours on the map
    });
  }
  refresh();
}

void TradeoffStudio::refresh() {
  const SweepStudy& study = m_panel->study();
  const std::vector<QColor> colours = m_panel->runColours();
  if (study.runs.size() < m_runCount) // a run left: the chosen indices no longer hold
    m_chosen = {-1, -1};
  m_runCount = study.runs.size();
  auto shared = std::make_shared<const SweepStudy>(study);
  m_throughput->setStudy(shared, colours);
  m_latency->setStudy(shared, colours);
  m_throughput->setChosen(m_chosen.first, m_chosen.second);
  m_latency->setChosen(m_chosen.first, m_chosen.second);

  const int current = m_runs->currentRow();
  m_runs->clear();
  for (std::size_t r = 0; r < study.runs.size(); ++r) {
    const SweepRun& run = study.runs[r];
    QString line;
    const QString settings =
        run.rows.size() == 1 ? tr("1 setting") : tr("%1 settings").arg(run.rows.size());
    if (int(r) == m_panel->runningRun()) {
      line = tr("measuring… %1 so far").arg(settings);
    } else {
      const SweepRow* first = run.rows.empty() ? nullptr : &run.rows.front();
      line = tr("%1 · built in %2 s · %3 · %4")
                 .arg(settings)
                 .arg(first ? first->buildSeconds : 0.0, 0, 'f', 2)
                 .arg(StudyChart::formatBytes(first ? first->bytes : 0))
                 .arg(QString::fromStdString(run.backend));
    }
    auto* item = new QListWidgetItem(swatch(colours[r]),
                                     QString::fromStdString(run.label()) + '\n' + line, m_runs);
    item->setToolTip(QString::fromStdString(run.label()));
  }
  if (current >= 0 && current < m_runs->count())
    m_runs->setCurrentRow(current);
  m_remove->setEnabled(!study.runs.empty());
  m_clear->setEnabled(!study.runs.empty() || study.exact);
  m_exportPng->setEnabled(!study.runs.empty());
  m_exportCsv->setEnabled(!study.runs.empty());
  m_run->setEnabled(m_panel->dataset() != nullptr && m_panel->runningRun() < 0);
  m_cancel->setEnabled(m_panel->runningRun() >= 0);
  m_next->setText(m_panel->dataset()
                      ? tr("Next run: %1 (build parameters, k and queries in the Index sweep dock)")
                            .arg(m_panel->nextRunLabel())
                      : tr("Open a data set first."));
  m_reference->setText(
      study.exact ? tr("Exact search on the same %1 queries (the dashed reference): %2 queries/s, "
                       "p50 %3 ms, p99 %4 ms (%5)")
                        .arg(study.queries)
                        .arg(QLocale(QLocale::English).toString(study.exact->qps, 'f', 0))
                        .arg(StudyChart::formatMs(study.exact->p50Ms))
                        .arg(StudyChart::formatMs(study.exact->p99Ms))
                        .arg(QString::fromStdString(study.exactBackend))
                  : tr("The exact search is timed on the same queries with the first run."));
  if (m_chosen.first >= 0)
    showDetails(m_chosen.first, m_chosen.second);
  else if (study.runs.empty())
    m_details->setText(tr("Hover a point for its setting; click it to ring the neighbours it "
                          "missed on the map."));
}

void TradeoffStudio::showDetails(int run, int row) {
  const SweepStudy& study = m_panel->study();
  if (run < 0 || run >= int(study.runs.size()) || row < 0 ||
      row >= int(study.runs[std::size_t(run)].rows.size()))
    return;
  const SweepRun& r = study.runs[std::size_t(run)];
  QString text = StudyChart::describe(r, r.rows[std::size_t(row)]);
  if (study.exact && study.exact->qps > 0)
    text += tr(" · %1× the exact search's queries/s")
                .arg(r.rows[std::size_t(row)].qps / study.exact->qps, 0, 'f', 1);
  m_details->setText(text);
}

QImage TradeoffStudio::figure(const QSize& size) const {
  const SweepStudy& study = m_panel->study();
  return renderStudyFigure(study, m_panel->runColours(), size,
                           tr("k = %1 · %2 held-out queries · %3")
                               .arg(study.k)
                               .arg(study.queries)
                               .arg(QString::fromLatin1(metricName(m_panel->metric()))));
}

bool TradeoffStudio::reportFailure(const QString& path, const std::exception& e) {
  // The engine's messages name the file; one that does not is given the name.
  const QString what = QString::fromUtf8(e.what());
  m_lastError = tr("Export failed: %1").arg(what.contains(path) ? what : path + ": " + what);
  m_status->setText(m_lastError);
  auto* box =
      new QMessageBox(QMessageBox::Warning, tr("Export"), m_lastError, QMessageBox::Ok, this);
  box->setTextFormat(Qt::PlainText);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  return false;
}

bool TradeoffStudio::exportCsv(const QString& path) {
  m_lastError.clear();
  try {
    exportStudyCsv(path, m_panel->inputFiles(), m_panel->study());
  } catch (const std::exception& e) {
    return reportFailure(path, e);
  }
  m_status->setText(tr("Wrote %1").arg(path));
  return true;
}

bool TradeoffStudio::exportPng(const QString& path) {
  m_lastError.clear();
  try {
    exportStudyPicture(path, m_panel->inputFiles(), figure());
  } catch (const std::exception& e) {
    return reportFailure(path, e);
  }
  m_status->setText(tr("Wrote %1").arg(path));
  return true;
}

} // namespace nearscape::ui

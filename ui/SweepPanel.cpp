#include "SweepPanel.h"

#include "ExplorerSession.h"
#include "Export.h"

#include "JobRunner.h"
#include "ParetoPlot.h"
#include "StudyChart.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>

namespace nearscape::ui {

namespace {

/// What a finished sweep hands back to the GUI thread.
struct SweepOutcome {
  std::vector<SweepRow> rows; ///< with the Pareto flags
  double truthSeconds = 0;
  double buildSeconds = 0;
  std::string backend;
  SweepRun run;                  ///< the run as the study keeps it
  Matrix<std::int32_t> truth;    ///< the split's exact truth (for the study's next runs)
  std::optional<SweepRow> exact; ///< the exact reference, when this run measured it
  std::string exactBackend;
  std::int64_t queries = 0;
};

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  return item;
}

} // namespace

SweepPanel::SweepPanel(Context context, QWidget* parent)
    : QWidget(parent), m_context(context), m_jobs(new JobRunner(this)), m_kind(new QComboBox(this)),
      m_k(new QSpinBox(this)), m_queries(new QSpinBox(this)), m_buildForm(new QFormLayout),
      m_run(new QPushButton(tr("Run sweep"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_studioButton(new QPushButton(tr("Trade-off Studio…"), this)), m_status(new QLabel(this)),
      m_plot(new ParetoPlot(this)), m_table(new QTableWidget(this)) {
  m_status->setTextFormat(Qt::PlainText); // error messages quote file contents
  for (const std::string& kind : indexKinds())
    m_kind->addItem(QString::fromStdString(kind));
  m_kind->setToolTip(tr("graph: a pruned kNN graph searched best-first (SONG on the GPU); "
                        "ivf: IVF-Flat, k-means lists of which nprobe are scanned"));
  m_k->setRange(1, 100);
  m_k->setValue(10);
  m_queries->setRange(10, 10000);
  m_queries->setValue(1000);
  m_queries->setToolTip(tr("Seeded items held out of the index as queries (plus the selected "
                           "item)"));

  auto* form = new QFormLayout;
  form->addRow(tr("Index"), m_kind);
  form->addRow(tr("k"), m_k);
  form->addRow(tr("Queries held out"), m_queries);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_studioButton);
  m_studioButton->setToolTip(tr("Every run of this study, full size: one colour per build, the "
                                "exact search as the reference, latency, export"));
  m_cancel->setEnabled(false);
  m_status->setWordWrap(true);
  m_status->setMinimumHeight(3 * m_status->fontMetrics().lineSpacing());
  m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_table->setColumnCount(8);
  m_table->setHorizontalHeaderLabels({tr("setting"), tr("recall"), tr("queries/s"), tr("p50 ms"),
                                      tr("p99 ms"), tr("build s"), tr("MB"), tr("front")});
  m_table->verticalHeader()->hide();
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_plot->setMinimumHeight(200);
  m_table->setMinimumHeight(120);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(m_buildForm);
  layout->addLayout(buttons);
  layout->addWidget(m_status);
  layout->addWidget(m_plot, 2);
  layout->addWidget(m_table, 1);

  connect(m_kind, &QComboBox::currentTextChanged, this, [this] {
    rebuildBuildControls();
    emit controlsChanged();
  });
  connect(m_studioButton, &QPushButton::clicked, this, &SweepPanel::studioRequested);
  connect(m_run, &QPushButton::clicked, this, &SweepPanel::startSweep);
  connect(m_cancel, &QPushButton::clicked, m_jobs, &JobRunner::cancel);
  connect(m_plot, &ParetoPlot::rowChosen, this, &SweepPanel::chooseRow);
  connect(m_table, &QTableWidget::cellClicked, this, [this](int row, int) { chooseRow(row); });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_status->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
  });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    if (m_jobs->busy())
      return; // a job superseded by the one running now
    jobEnded();
    m_status->setText(tr("Sweep failed: %1").arg(message));
  });
  connect(m_jobs, &JobRunner::cancelled, this, [this](const QString&) {
    if (m_jobs->busy())
      return;
    jobEnded();
    m_status->setText(tr("Sweep cancelled."));
  });
  setDataset(nullptr);
}

SweepPanel::~SweepPanel() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

void SweepPanel::jobEnded() {
  m_run->setEnabled(m_dataset != nullptr);
  m_cancel->setEnabled(false);
  if (m_runningRun >= 0) { // a run that failed or was cancelled leaves the study
    const int run = m_runningRun;
    m_runningRun = -1;
    removeRun(run);
  }
}

void SweepPanel::setDataset(std::shared_ptr<const Dataset> dataset) {
  m_jobs->cancel();
  ++m_generation;
  clearStudy();
  m_dataset = std::move(dataset);
  m_selectedItem = -1;
  m_missedQueryItem = -1;
  m_baseRows.clear();
  m_plot->clear();
  m_table->setRowCount(0);
  m_run->setEnabled(m_dataset != nullptr);
  if (m_dataset)
    m_queries->setMaximum(int(std::clamp<std::int64_t>(m_dataset->size() / 2, 1, 10000)));
  m_status->setText(m_dataset ? tr("Build an index on this data and sweep its search settings.")
                              : tr("Open a data set first."));
  rebuildBuildControls();
}

void SweepPanel::setMetric(Metric metric) {
  if (metric == m_metric)
    return;
  m_metric = metric;
  setDataset(m_dataset); // results measured under another metric no longer hold
}

void SweepPanel::rebuildBuildControls() {
  while (m_buildForm->rowCount() > 0)
    m_buildForm->removeRow(0);
  m_buildBoxes.clear();
  const std::int64_t n = m_dataset ? m_dataset->size() : 10000;
  // The index describes its own build parameters: one control each, at its default.
  for (const IndexParameter& p : indexBuildParameters(m_kind->currentText().toStdString(), n)) {
    auto* box = new QDoubleSpinBox(this);
    box->setDecimals(p.integer ? 0 : 3);
    box->setRange(p.minimum, p.maximum);
    box->setValue(p.defaultValue);
    box->setToolTip(QString::fromStdString(p.description));
    m_buildForm->addRow(QString::fromStdString(p.name), box);
    m_buildBoxes[p.name] = box;
    connect(box, &QDoubleSpinBox::valueChanged, this, &SweepPanel::controlsChanged);
  }
}

QDoubleSpinBox* SweepPanel::buildBox(const std::string& name) const {
  const auto it = m_buildBoxes.find(name);
  return it == m_buildBoxes.end() ? nullptr : it->second;
}

QString SweepPanel::nextRunLabel() const {
  SweepRun run;
  run.kind = m_kind->currentText().toStdString();
  for (const auto& [name, box] : m_buildBoxes)
    run.build[name] = box->value();
  return QString::fromStdString(run.label());
}

std::vector<QColor> SweepPanel::runColours() const {
  std::vector<QColor> colours;
  for (const int slot : m_runSlots)
    colours.push_back(StudyChart::runColour(slot));
  return colours;
}

void SweepPanel::removeRun(int index) {
  if (index < 0 || index >= int(m_study.runs.size()))
    return;
  if (index == m_runningRun) {
    ++m_generation; // its late rows and result are dropped
    m_runningRun = -1;
    m_jobs->cancel();
    m_run->setEnabled(m_dataset != nullptr);
    m_cancel->setEnabled(false);
    m_status->setText(tr("Sweep cancelled: its run was removed."));
  } else if (index < m_runningRun) {
    --m_runningRun;
  }
  if (index == m_dockRun) {
    m_dockRun = -1;
    m_plot->clear();
    m_table->setRowCount(0);
  } else if (index < m_dockRun) {
    --m_dockRun;
  }
  m_study.runs.erase(m_study.runs.begin() + index);
  m_runSlots.erase(m_runSlots.begin() + index);
  m_runRequests.erase(m_runRequests.begin() + index);
  emit studyChanged();
}

void SweepPanel::clearStudy() {
  if (m_runningRun >= 0) {
    ++m_generation;
    m_jobs->cancel();
    m_runningRun = -1;
    m_run->setEnabled(m_dataset != nullptr);
    m_cancel->setEnabled(false);
  }
  m_study = SweepStudy();
  m_runSlots.clear();
  m_runRequests.clear();
  m_dockRun = -1;
  m_studyK = 0;
  m_studyQueries = 0;
  m_studyItem = -1;
  m_studyTruth.reset();
  m_baseRows.clear();
  m_missedQueryItem = -1;
  m_plot->clear();
  m_table->setRowCount(0);
  emit studyChanged();
}

void SweepPanel::chooseStudyPoint(int run, int row) {
  if (run < 0 || run >= int(m_study.runs.size()) || row < 0 ||
      row >= int(m_study.runs[std::size_t(run)].rows.size()))
    return;
  if (run == m_dockRun && row < int(m_plot->rows().size())) {
    chooseRow(row);
    return;
  }
  const SweepRun& r = m_study.runs[std::size_t(run)];
  std::vector<std::int32_t> missed;
  for (const std::int32_t baseId : r.rows[std::size_t(row)].missed)
    if (baseId >= 0 && std::size_t(baseId) < m_baseRows.size())
      missed.push_back(std::int32_t(m_baseRows[std::size_t(baseId)]));
  emit missedChosen(
      m_missedQueryItem, missed,
      QString::fromStdString(r.label() + ' ' + formatParameters(r.rows[std::size_t(row)].params)));
}

void SweepPanel::startSweep() {
  if (!m_dataset)
    return;
  if (m_runningRun >= 0) // superseded: the job is cancelled below, its run leaves the study
    removeRun(m_runningRun);
  const quint64 generation = ++m_generation;
  m_plot->clear();
  m_table->setRowCount(0);
  m_run->setEnabled(false);
  m_cancel->setEnabled(true);
  const std::string kind = m_kind->currentText().toStdString();
  ParameterValues build;
  for (const auto& [name, box] : m_buildBoxes)
    build[name] = box->value();
  const int k = m_k->value();
  const std::int64_t queries = m_queries->value();

  // The study's runs are comparable only over the same queries: the same index built again
  // replaces its run; another k or number of queries begins a new study; an empty study takes
  // the item selected now.
  QString note;
  for (std::size_t r = 0; r < m_study.runs.size(); ++r)
    if (m_study.runs[r].kind == kind && m_runRequests[r] == build) {
      removeRun(int(r));
      break;
    }
  const std::int64_t item = m_study.runs.empty() ? m_selectedItem : m_studyItem;
  if (k != m_studyK || queries != m_studyQueries || item != m_studyItem) {
    if (!m_study.runs.empty())
      note = tr("A new study: other k or number of queries than its earlier runs. ");
    clearStudy();
    m_studyK = k;
    m_studyQueries = queries;
    m_studyItem = item;
  }
  m_study.k = k;
  SweepRun started;
  started.kind = kind;
  started.build = build;
  m_study.runs.push_back(started);
  int slot = 0; // the first colour no run holds
  while (std::find(m_runSlots.begin(), m_runSlots.end(), slot) != m_runSlots.end())
    ++slot;
  m_runSlots.push_back(slot);
  m_runRequests.push_back(build);
  m_runningRun = int(m_study.runs.size()) - 1;
  m_dockRun = m_runningRun;
  emit studyChanged();

  const std::int64_t selected = m_studyItem;
  const std::optional<Matrix<std::int32_t>> truth = m_studyTruth;
  const bool measureExact = !m_study.exact.has_value();
  auto dataset = m_dataset;
  const Context context = m_context;
  const Metric metric = m_metric;
  QPointer<SweepPanel> self(this);
  m_status->setText(note + tr("Holding out queries…"));
  m_jobs->run<SweepOutcome>(
      tr("Index sweep"),
      [=](JobControl& job) {
        HeldOutSweepOptions options;
        options.build = parseIndexBuildParams(kind, build); // the controls' values, by name
        options.metric = metric;
        options.holdout = queries;
        options.listMissesOf = selected;
        options.sweep.k = k;
        options.sweep.latencyQueries = std::min<std::int64_t>(100, queries);
        options.exactReference = measureExact;
        HeldOutSweepStages stages;
        if (truth) // the study's queries again: their truth is known
          stages.truth = [truth](const MatrixView<float>&, const MatrixView<float>&) {
            return *truth;
          };
        stages.onRow = [self, generation](const SweepRow& row) {
          QMetaObject::invokeMethod(
              self.data(),
              [self, generation, row] {
                if (self && self->m_generation == generation)
                  self->addRow(row);
              },
              Qt::QueuedConnection);
        };
        // The rows' misses name base rows: the panel maps them to items from the first row on.
        stages.onSplit = [self, generation](const HeldOutSweep& split) {
          QMetaObject::invokeMethod(
              self.data(),
              [self, generation, rows = split.held.baseRows, item = split.missedQueryRow()] {
                if (self && self->m_generation == generation) {
                  self->m_baseRows = rows;
                  self->m_missedQueryItem = item;
                }
              },
              Qt::QueuedConnection);
        };
        HeldOutSweep sweep =
            heldOutSweep(dataset->vectors.view(), std::nullopt, options, context, job, stages);
        SweepOutcome out;
        out.run = sweepRunOf(sweep);
        out.rows = sweep.rows;
        out.truthSeconds = sweep.truthSeconds;
        out.buildSeconds = sweep.index->buildSeconds();
        out.backend = std::string(backendName(sweep.index->backend()));
        out.truth = sweep.truth;
        out.exact = sweep.exact;
        out.exactBackend = std::string(backendName(sweep.exactBackend));
        out.queries = sweep.queries.rows;
        return out;
      },
      [this, generation](SweepOutcome& out) {
        if (generation != m_generation)
          return;
        for (std::size_t i = 0; i < out.rows.size() && int(i) < m_table->rowCount(); ++i)
          m_table->item(int(i), 7)->setText(out.rows[i].pareto ? QStringLiteral("✓") : QString());
        const auto front = std::count_if(out.rows.begin(), out.rows.end(),
                                         [](const SweepRow& r) { return r.pareto; });
        if (m_runningRun >= 0)
          m_study.runs[std::size_t(m_runningRun)] = std::move(out.run);
        m_runningRun = -1;
        m_studyTruth = out.truth;
        if (out.exact) {
          m_study.exact = out.exact;
          m_study.exactBackend = out.exactBackend;
        }
        m_study.queries = out.queries;
        m_status->setText(tr("%1 settings, %2 on the front · exact truth %3 s · build %4 s (%5) · "
                             "click a dot for the misses of item %6 · run %7 of the study")
                              .arg(out.rows.size())
                              .arg(front)
                              .arg(out.truthSeconds, 0, 'f', 2)
                              .arg(out.buildSeconds, 0, 'f', 2)
                              .arg(QString::fromStdString(out.backend))
                              .arg(m_missedQueryItem)
                              .arg(m_study.runs.size()));
        m_run->setEnabled(true);
        m_cancel->setEnabled(false);
        emit studyChanged();
        emit sweepFinished();
      });
}

void SweepPanel::addRow(const SweepRow& row) {
  if (m_runningRun >= 0) {
    m_study.runs[std::size_t(m_runningRun)].rows.push_back(row);
    emit studyChanged();
  }
  m_plot->addRow(row);
  const int r = m_table->rowCount();
  m_table->insertRow(r);
  m_table->setItem(r, 0, cell(QString::fromStdString(formatParameters(row.params))));
  m_table->setItem(r, 1, cell(QString::number(row.recall, 'f', 4)));
  m_table->setItem(r, 2, cell(QString::number(row.qps, 'f', 0)));
  m_table->setItem(r, 3, cell(QString::number(row.p50Ms, 'f', 3)));
  m_table->setItem(r, 4, cell(QString::number(row.p99Ms, 'f', 3)));
  m_table->setItem(r, 5, cell(QString::number(row.buildSeconds, 'f', 2)));
  m_table->setItem(r, 6, cell(QString::number(double(row.bytes) / 1e6, 'f', 1)));
  m_table->setItem(r, 7, cell({}));
  // The front so far, marked as rows arrive.
  for (int i = 0; i <= r; ++i)
    m_table->item(i, 7)->setText(m_plot->front()[std::size_t(i)] ? QStringLiteral("✓") : QString());
}

void SweepPanel::chooseRow(int index) {
  if (index < 0 || index >= int(m_plot->rows().size()))
    return;
  m_plot->setChosen(index);
  m_table->selectRow(index);
  const SweepRow& row = m_plot->rows()[std::size_t(index)];
  std::vector<std::int32_t> missed;
  for (const std::int32_t baseId : row.missed)
    if (baseId >= 0 && std::size_t(baseId) < m_baseRows.size())
      missed.push_back(std::int32_t(m_baseRows[std::size_t(baseId)]));
  emit missedChosen(m_missedQueryItem, missed,
                    QString::fromStdString(formatParameters(row.params)));
}

QStringList SweepPanel::inputFiles() const {
  if (m_session)
    return m_session->inputFiles();
  return m_dataset ? inputsOf(QString::fromStdString(m_dataset->path)) : QStringList();
}

void SweepPanel::observe(ExplorerSession* session) {
  m_session = session;
  connect(session, &ExplorerSession::dataChanged, this, [this, session] {
    setDataset(session->dataset());
    setMetric(session->metric());
  });
  connect(session, &ExplorerSession::metricChanged, this, &SweepPanel::setMetric);
  connect(session, &ExplorerSession::selectedItemChanged, this,
          [this](std::int64_t item) { setSelectedItem(item); });
}

} // namespace nearscape::ui

#include "SweepPanel.h"

#include "JobRunner.h"
#include "ParetoPlot.h"

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
      m_status(new QLabel(this)), m_plot(new ParetoPlot(this)), m_table(new QTableWidget(this)) {
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

  connect(m_kind, &QComboBox::currentTextChanged, this, [this] { rebuildBuildControls(); });
  connect(m_run, &QPushButton::clicked, this, &SweepPanel::startSweep);
  connect(m_cancel, &QPushButton::clicked, m_jobs, &JobRunner::cancel);
  connect(m_plot, &ParetoPlot::rowChosen, this, &SweepPanel::chooseRow);
  connect(m_table, &QTableWidget::cellClicked, this, [this](int row, int) { chooseRow(row); });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_status->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
  });
  auto idle = [this] {
    m_run->setEnabled(m_dataset != nullptr);
    m_cancel->setEnabled(false);
  };
  connect(m_jobs, &JobRunner::failed, this, [this, idle](const QString&, const QString& message) {
    idle();
    m_status->setText(tr("Sweep failed: %1").arg(message));
  });
  connect(m_jobs, &JobRunner::cancelled, this, [this, idle](const QString&) {
    idle();
    m_status->setText(tr("Sweep cancelled."));
  });
  connect(m_jobs, &JobRunner::finished, this, idle);
  setDataset(nullptr);
}

SweepPanel::~SweepPanel() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

void SweepPanel::setDataset(std::shared_ptr<const Dataset> dataset) {
  m_jobs->cancel();
  ++m_generation;
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
  }
}

void SweepPanel::startSweep() {
  if (!m_dataset)
    return;
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
  const std::int64_t selected = m_selectedItem;
  auto dataset = m_dataset;
  const Context context = m_context;
  const Metric metric = m_metric;
  QPointer<SweepPanel> self(this);
  m_status->setText(tr("Holding out queries…"));
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
        HeldOutSweepStages stages;
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
        out.rows = std::move(sweep.rows);
        out.truthSeconds = sweep.truthSeconds;
        out.buildSeconds = sweep.index->buildSeconds();
        out.backend = std::string(backendName(sweep.index->backend()));
        return out;
      },
      [this, generation](SweepOutcome& out) {
        if (generation != m_generation)
          return;
        for (std::size_t i = 0; i < out.rows.size() && int(i) < m_table->rowCount(); ++i)
          m_table->item(int(i), 7)->setText(out.rows[i].pareto ? QStringLiteral("✓") : QString());
        const auto front = std::count_if(out.rows.begin(), out.rows.end(),
                                         [](const SweepRow& r) { return r.pareto; });
        m_status->setText(tr("%1 settings, %2 on the front · exact truth %3 s · build %4 s (%5) · "
                             "click a dot for the misses of item %6")
                              .arg(out.rows.size())
                              .arg(front)
                              .arg(out.truthSeconds, 0, 'f', 2)
                              .arg(out.buildSeconds, 0, 'f', 2)
                              .arg(QString::fromStdString(out.backend))
                              .arg(m_missedQueryItem));
        emit sweepFinished();
      });
}

void SweepPanel::addRow(const SweepRow& row) {
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

} // namespace nearscape::ui

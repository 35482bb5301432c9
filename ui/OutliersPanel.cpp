#include "OutliersPanel.h"

#include "ExplorerSession.h"

#include "Export.h"
#include "ItemStrip.h"
#include "JobRunner.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>

namespace nearscape::ui {
namespace {

struct Scored {
  std::vector<float> scores;
  RunReport graph;
  double seconds = 0;
};

} // namespace

OutliersPanel::OutliersPanel(Context context, QWidget* parent)
    : QWidget(parent), m_context(context), m_jobs(new JobRunner(this)), m_kind(new QComboBox(this)),
      m_k(new QSpinBox(this)), m_top(new QSpinBox(this)), m_run(new QPushButton(tr("Score"), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)),
      m_export(new QPushButton(tr("Export scores…"), this)), m_summary(new QLabel(this)),
      m_list(new ItemStrip(false, this)) {
  m_kind->addItem(tr("local outlier factor"), QStringLiteral("lof"));
  m_kind->addItem(tr("distance to the k-th neighbour"), QStringLiteral("kth"));
  m_kind->setToolTip(tr("LOF: about 1 inside a cluster, above 1 for an item less dense than its "
                        "neighbours. k-th distance: how far the k-th neighbour lies."));
  m_k->setRange(1, 100);
  m_k->setValue(10);
  m_top->setRange(1, 10000);
  m_top->setValue(100);
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::PlainText);
  m_summary->setObjectName(QStringLiteral("outliersSummary"));
  m_list->setObjectName(QStringLiteral("outlierList"));
  m_cancel->setEnabled(false);
  auto* form = new QFormLayout;
  form->addRow(tr("Score"), m_kind);
  form->addRow(tr("Neighbours (k)"), m_k);
  form->addRow(tr("List the top"), m_top);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_export);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(m_summary);
  layout->addWidget(m_list, 1);

  connect(m_run, &QPushButton::clicked, this, &OutliersPanel::score);
  connect(m_cancel, &QPushButton::clicked, m_jobs, &JobRunner::cancel);
  connect(m_top, &QSpinBox::valueChanged, this, [this] {
    if (!m_scores.empty())
      showRanking();
  });
  connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0 && std::size_t(row) < m_ranked.size())
      emit itemChosen(m_ranked[std::size_t(row)]);
  });
  connect(m_export, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export outlier scores"), QString(),
                                     tr("NumPy scores (*.npy);;Ranked table (*.tsv)"));
    QString error;
    if (!path.isEmpty() && !exportScores(path, &error))
      m_summary->setText(tr("Export failed: %1").arg(error));
  });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_summary->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
  });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    m_cancel->setEnabled(false);
    m_run->setEnabled(m_dataset != nullptr);
    m_summary->setText(tr("Scoring failed: %1").arg(message));
  });
  connect(m_jobs, &JobRunner::cancelled, this, [this](const QString&) {
    m_cancel->setEnabled(false);
    m_run->setEnabled(m_dataset != nullptr);
    m_summary->setText(tr("Scoring cancelled."));
  });
  setDataset(nullptr);
}

OutliersPanel::~OutliersPanel() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

void OutliersPanel::setThumbnailer(Thumbnailer* thumbnailer) {
  m_list->setThumbnailer(thumbnailer);
}

void OutliersPanel::setDataset(std::shared_ptr<const Dataset> dataset) {
  m_jobs->cancel();
  ++m_generation;
  m_dataset = std::move(dataset);
  m_scores.clear();
  m_ranked.clear();
  m_list->clear();
  const bool any = m_dataset && m_dataset->size() >= 2;
  m_run->setEnabled(any);
  m_export->setEnabled(false);
  if (any)
    m_k->setMaximum(int(std::min<std::int64_t>(100, m_dataset->size() - 1)));
  m_summary->setText(any ? tr("Score every item over its exact nearest neighbours.")
                         : tr("Open a data set first."));
}

void OutliersPanel::setMetric(Metric metric) {
  if (metric == m_metric)
    return;
  m_metric = metric;
  setDataset(m_dataset);
}

void OutliersPanel::score() {
  if (!m_dataset || m_dataset->size() < 2)
    return;
  const auto dataset = m_dataset;
  const Metric metric = m_metric;
  const Context context = m_context;
  const int k = m_k->value();
  const bool lof = m_kind->currentData().toString() == QLatin1String("lof");
  const quint64 generation = ++m_generation;
  m_run->setEnabled(false);
  m_cancel->setEnabled(true);
  m_summary->setText(tr("Exact %1-NN graph…").arg(k));
  m_jobs->run<Scored>(
      tr("Outlier scores"),
      [dataset, metric, context, k, lof](JobControl& job) {
        const auto started = std::chrono::steady_clock::now();
        // The exact graph: scores of an approximate one flag items whose neighbours were missed.
        Scored out;
        if (lof) { // k-distinct: repeated rows count once (analysis/DistinctOutliers.h)
          OutlierScores s =
              distinctLocalOutlierFactor(dataset->vectors.view(), k, metric, context, job);
          out.scores = std::move(s.scores);
          out.graph = s.graph;
        } else {
          const KnnResult graph = knnGraph(dataset->vectors.view(), k, metric, context, job);
          out.scores = kthNeighbourDistance(graph.distances.view(), k);
          out.graph = graph.report;
        }
        out.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return out;
      },
      [this, generation](Scored& result) {
        if (generation != m_generation)
          return;
        m_cancel->setEnabled(false);
        m_run->setEnabled(true);
        m_scores = std::move(result.scores);
        showRanking();
        m_summary->setText(m_summary->text() +
                           tr(" · exact graph: %1, %2 s")
                               .arg(QString::fromStdString(result.graph.describe()))
                               .arg(result.seconds, 0, 'f', 2));
        emit scored();
      });
}

void OutliersPanel::showRanking() {
  m_ranked = topItems(m_scores, std::int64_t(m_top->value()));
  std::vector<std::int32_t> ids;
  std::vector<QString> captions;
  for (std::size_t r = 0; r < m_ranked.size(); ++r) {
    ids.push_back(std::int32_t(m_ranked[r]));
    captions.push_back(
        tr("%1. score %2").arg(r + 1).arg(double(m_scores[std::size_t(m_ranked[r])]), 0, 'g', 4));
  }
  m_list->blockSignals(true);
  m_list->setItems(*m_dataset, ids, captions);
  m_list->blockSignals(false);
  m_export->setEnabled(true);
  m_summary->setText(tr("The %1 most outlying of %2 items (%3)")
                         .arg(m_ranked.size())
                         .arg(m_dataset->size())
                         .arg(m_kind->currentText()));
}

QStringList OutliersPanel::inputFiles() const {
  return m_session ? m_session->inputFiles() : QStringList();
}

bool OutliersPanel::exportScores(const QString& path, QString* error) const {
  try {
    NEARSCAPE_EXPECTS(!m_scores.empty(), "nothing scored yet");
    if (QFileInfo(path).suffix().compare(QLatin1String("npy"), Qt::CaseInsensitive) == 0) {
      exportScoresNpy(path, *m_dataset, m_scores, inputFiles());
      return true;
    }
    const Dataset& ds = *m_dataset;
    std::string text = "rank\tid\tscore";
    for (const std::string& name : ds.metadata.columnNames) {
      text += '\t';
      text += tsvCell(name);
    }
    text += '\n';
    const std::vector<std::int64_t> all = topItems(m_scores, ds.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
      const std::int64_t item = all[r];
      text += std::to_string(r + 1) + '\t' + std::to_string(item) + '\t' +
              std::to_string(m_scores[std::size_t(item)]);
      for (const auto& column : ds.metadata.columns) {
        text += '\t';
        text += tsvCell(column[std::size_t(item)]);
      }
      text += '\n';
    }
    exportText(path, ds, text, inputFiles());
    return true;
  } catch (const std::exception& e) {
    if (error)
      *error = QString::fromStdString(e.what());
    return false;
  }
}

void OutliersPanel::observe(ExplorerSession* session) {
  m_session = session;
  connect(session, &ExplorerSession::dataChanged, this, [this, session] {
    setMetric(session->metric());
    setDataset(session->dataset());
  });
  connect(session, &ExplorerSession::metricChanged, this, &OutliersPanel::setMetric);
}

} // namespace nearscape::ui

#include "ComparePanel.h"

#include "ExplorerSession.h"

#include "ItemStrip.h"
#include "JobRunner.h"

#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace nearscape::ui {
namespace {

struct Comparison {
  std::vector<float> overlap;
  std::vector<float> otherMap; ///< n × 2: the second embedding's own map
  std::string otherDescription;
  double seconds = 0;
};

} // namespace

ComparePanel::ComparePanel(Context context, QWidget* parent)
    : QWidget(parent), m_context(context), m_jobs(new JobRunner(this)), m_k(new QSpinBox(this)),
      m_cancel(new QPushButton(tr("Cancel"), this)), m_summary(new QLabel(this)),
      m_list(new ItemStrip(false, this)) {
  m_k->setRange(1, 100);
  m_k->setValue(10);
  m_k->setToolTip(tr("Neighbours compared per item (the next comparison)"));
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::PlainText);
  m_summary->setObjectName(QStringLiteral("compareSummary"));
  m_list->setObjectName(QStringLiteral("mostChanged"));
  m_cancel->setEnabled(false);
  auto* form = new QFormLayout;
  auto* row = new QHBoxLayout;
  row->addWidget(m_k, 1);
  row->addWidget(m_cancel);
  form->addRow(tr("Neighbours (k)"), row);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(m_summary);
  layout->addWidget(new QLabel(tr("Changed most (fewest neighbours kept):"), this));
  layout->addWidget(m_list, 1);
  connect(m_cancel, &QPushButton::clicked, m_jobs, &JobRunner::cancel);
  connect(m_list, &QListWidget::currentRowChanged, this, [this](int r) {
    if (r >= 0 && std::size_t(r) < m_changed.size())
      emit itemChosen(m_changed[std::size_t(r)]);
  });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_summary->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
  });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    m_cancel->setEnabled(false);
    m_summary->setText(tr("Comparison failed: %1").arg(message));
    emit failed(message);
  });
  connect(m_jobs, &JobRunner::cancelled, this, [this](const QString&) {
    m_cancel->setEnabled(false);
    m_summary->setText(tr("Comparison cancelled."));
  });
  setDataset(nullptr, Metric::L2);
}

ComparePanel::~ComparePanel() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

bool ComparePanel::running() const {
  return m_cancel->isEnabled(); // enabled exactly while a comparison runs
}

void ComparePanel::setThumbnailer(Thumbnailer* thumbnailer) {
  m_list->setThumbnailer(thumbnailer);
}

void ComparePanel::setDataset(std::shared_ptr<const Dataset> dataset, Metric metric) {
  m_jobs->cancel();
  ++m_generation;
  m_dataset = std::move(dataset);
  m_metric = metric;
  m_overlap.clear();
  m_otherMap.clear();
  m_changed.clear();
  m_otherPath.clear();
  m_list->clear();
  m_summary->setText(m_dataset ? tr("File → Compare With… opens a second embedding of the same "
                                    "items and compares each item's nearest neighbours in both.")
                               : tr("Open a data set first."));
}

void ComparePanel::compareWith(const QString& path) {
  if (!m_dataset)
    return;
  const auto dataset = m_dataset;
  const Metric metric = m_metric;
  const Context context = m_context;
  const int k = m_k->value();
  const std::string other = path.toStdString();
  const quint64 generation = ++m_generation;
  m_cancel->setEnabled(true);
  m_summary->setText(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  m_jobs->run<Comparison>(
      tr("Compare"),
      [dataset, metric, context, k, other](JobControl& job) {
        const auto started = std::chrono::steady_clock::now();
        OpenOptions options;
        options.loadThumbnails = false;
        const Dataset b = openDataset(other, options, job);
        NEARSCAPE_EXPECTS(b.size() == dataset->size(),
                          other + " has " + std::to_string(b.size()) +
                              " items; the open data has " + std::to_string(dataset->size()) +
                              ": a comparison needs the same items, row for row");
        NEARSCAPE_EXPECTS(k < dataset->size(), "k must be below the number of items");
        const Metric otherMetric = b.metric.value_or(Metric::L2);
        // Exact graphs on both sides: an approximate one would count its own misses as change.
        JobControl first = job.sub(0.0, 0.35), second = job.sub(0.35, 0.7),
                   third = job.sub(0.7, 1.0);
        const KnnResult ga = knnGraph(dataset->vectors.view(), k, metric, context, first);
        const KnnResult gb = knnGraph(b.vectors.view(), k, otherMetric, context, second);
        Comparison c;
        c.overlap = neighbourhoodOverlap(ga.ids.view(), gb.ids.view(), k);
        // The second embedding's own 2D map, laid out from its exact graph, for the maps side by
        // side (its rows are the same items: hover, selection and paths link them).
        ExploreParams map;
        map.metric = otherMetric;
        map.k = k;
        map.neighbours = false;
        map.forest = false;
        map.layout.dim = 2;
        ExploreStages given;
        given.graph = [&gb](const Exploration&) { return std::optional<KnnResult>(gb); };
        const Exploration laidOut = explore(b.vectors.view(), map, context, third, given);
        c.otherMap.assign(laidOut.map.data(),
                          laidOut.map.data() + laidOut.map.rows() * laidOut.map.cols());
        c.otherDescription = std::to_string(b.size()) + " × " + std::to_string(b.dim()) + ", " +
                             std::string(metricName(otherMetric));
        c.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return c;
      },
      [this, generation, path, k](Comparison& c) {
        if (generation != m_generation)
          return;
        m_cancel->setEnabled(false);
        m_overlap = std::move(c.overlap);
        m_otherMap = std::move(c.otherMap);
        m_otherPath = path;
        // Most changed: the smallest overlap first (ties by id).
        std::vector<float> lost(m_overlap.size());
        for (std::size_t i = 0; i < lost.size(); ++i)
          lost[i] = 1.0f - m_overlap[i];
        m_changed = topItems(lost, 100);
        std::vector<std::int32_t> ids;
        std::vector<QString> captions;
        for (const std::int64_t item : m_changed) {
          ids.push_back(std::int32_t(item));
          captions.push_back(tr("%1 of %2 neighbours kept")
                                 .arg(int(std::lround(m_overlap[std::size_t(item)] * k)))
                                 .arg(k));
        }
        m_list->blockSignals(true);
        m_list->setItems(*m_dataset, ids, captions);
        m_list->blockSignals(false);
        double mean = 0;
        std::vector<int> histogram(std::size_t(k) + 1, 0);
        for (const float v : m_overlap) {
          mean += v;
          ++histogram[std::size_t(std::lround(v * k))];
        }
        mean /= double(std::max<std::size_t>(1, m_overlap.size()));
        QStringList bars;
        for (int shared = k; shared >= 0; --shared)
          if (histogram[std::size_t(shared)] > 0)
            bars << tr("%1 kept: %2").arg(shared).arg(histogram[std::size_t(shared)]);
        m_summary->setText(
            tr("Against %1 (%2): on average %3% of an item's exact %4 nearest "
               "neighbours are the same in both · %5 · %6 s")
                .arg(QFileInfo(path).fileName(), QString::fromStdString(c.otherDescription))
                .arg(100 * mean, 0, 'f', 1)
                .arg(k)
                .arg(bars.join(QStringLiteral(", ")))
                .arg(c.seconds, 0, 'f', 2));
        emit compared(
            tr("neighbours kept in %1 (exact %2-NN)").arg(QFileInfo(path).fileName()).arg(k),
            std::vector<double>(m_overlap.begin(), m_overlap.end()));
      });
}

void ComparePanel::observe(ExplorerSession* session) {
  auto follow = [this, session] { setDataset(session->dataset(), session->metric()); };
  connect(session, &ExplorerSession::dataChanged, this, follow);
  connect(session, &ExplorerSession::metricChanged, this, follow);
}

} // namespace nearscape::ui

#include "DuplicatesPanel.h"

#include "ExplorerSession.h"

#include "Export.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "Thumbnailer.h"

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace nearscape::ui {
namespace {

constexpr int kSliderSteps = 200; ///< the slider covers 0–20% of the items
constexpr double kSliderSpan = 0.2;
constexpr double kHeadroom = 1.5; ///< a search covers this much more than asked

double quantileOfSlider(int value) {
  return kSliderSpan * double(value) / kSliderSteps;
}

} // namespace

DuplicatesPanel::DuplicatesPanel(Context context, QWidget* parent)
    : QWidget(parent), m_context(context), m_jobs(new JobRunner(this)),
      m_slider(new QSlider(Qt::Horizontal, this)), m_sliderText(new QLabel(this)),
      m_distance(new QDoubleSpinBox(this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_summary(new QLabel(this)), m_list(nullptr), m_members(new ItemStrip(false, this)),
      m_exportGroups(new QPushButton(tr("Export groups…"), this)),
      m_exportKeep(new QPushButton(tr("Export keep-list…"), this)) {
  auto* groupStrip = new ItemStrip(false, this);
  m_list = groupStrip;
  m_slider->setRange(0, kSliderSteps);
  m_slider->setValue(10); // 1%: the items nearest to another, about one in a hundred
  m_slider->setToolTip(tr("Threshold as a share of the items: the distance within which this "
                          "share of them has its nearest other item"));
  m_distance->setDecimals(6);
  m_distance->setRange(-1e12, 1e12);
  m_distance->setKeyboardTracking(false);
  m_distance->setToolTip(tr("Largest distance of a duplicate pair (Euclidean for L2, 1 − cos, "
                            "−inner product)"));
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::PlainText);
  m_summary->setObjectName(QStringLiteral("duplicatesSummary"));
  m_list->setObjectName(QStringLiteral("duplicateGroups"));
  m_members->setObjectName(QStringLiteral("duplicateMembers"));
  m_cancel->setEnabled(false);

  auto* form = new QFormLayout;
  auto* sliderRow = new QHBoxLayout;
  sliderRow->addWidget(m_slider, 1);
  sliderRow->addWidget(m_sliderText);
  form->addRow(tr("Nearest-neighbour share"), sliderRow);
  auto* distanceRow = new QHBoxLayout;
  distanceRow->addWidget(m_distance, 1);
  distanceRow->addWidget(m_cancel);
  form->addRow(tr("Distance ≤"), distanceRow);
  auto* exports = new QHBoxLayout;
  exports->addWidget(m_exportGroups);
  exports->addWidget(m_exportKeep);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(m_summary);
  layout->addWidget(new QLabel(tr("Groups, largest first:"), this));
  layout->addWidget(m_list, 2);
  layout->addWidget(new QLabel(tr("Items of the chosen group:"), this));
  layout->addWidget(m_members, 1);
  layout->addLayout(exports);

  connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
    m_sliderText->setText(QStringLiteral("%1%").arg(100 * quantileOfSlider(value), 0, 'f', 1));
    if (m_syncing)
      return;
    const double q = quantileOfSlider(value);
    // While dragging, only what the last search covers updates; a release searches further.
    if (m_slider->isSliderDown() && !(m_found.reach >= 0 && knownQuantile(m_found.nearest, q)))
      return;
    setQuantile(q);
  });
  connect(m_slider, &QSlider::sliderReleased, this,
          [this] { setQuantile(quantileOfSlider(m_slider->value())); });
  connect(m_distance, &QDoubleSpinBox::valueChanged, this, [this](double value) {
    if (!m_syncing)
      setThreshold(value);
  });
  connect(m_cancel, &QPushButton::clicked, m_jobs, &JobRunner::cancel);
  connect(groupStrip, &QListWidget::currentRowChanged, this, &DuplicatesPanel::chooseGroup);
  connect(m_members, &ItemStrip::itemChosen, this,
          [this](std::int32_t item) { emit itemChosen(item); });
  auto exportWith = [this](const QString& title, const QString& filter, bool groups) {
    const QString path = QFileDialog::getSaveFileName(this, title, QString(), filter);
    if (path.isEmpty())
      return;
    QString error;
    if (!(groups ? exportGroups(path, &error) : exportKeepList(path, &error)))
      m_summary->setText(tr("Export failed: %1").arg(error));
  };
  connect(m_exportGroups, &QPushButton::clicked, this, [exportWith, this] {
    exportWith(tr("Export duplicate groups"), tr("Tab-separated (*.tsv)"), true);
  });
  connect(m_exportKeep, &QPushButton::clicked, this, [exportWith, this] {
    exportWith(tr("Export the ids to keep"), tr("Text (*.txt)"), false);
  });
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_summary->setText(tr("%1 (%2%)").arg(message).arg(int(fraction * 100)));
  });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    m_cancel->setEnabled(false);
    m_summary->setText(tr("Search failed: %1").arg(message));
  });
  connect(m_jobs, &JobRunner::cancelled, this, [this](const QString&) {
    m_cancel->setEnabled(false);
    m_summary->setText(tr("Search cancelled."));
  });
  setDataset(nullptr);
}

DuplicatesPanel::~DuplicatesPanel() {
  m_jobs->cancel();
  m_jobs->waitForDone();
}

void DuplicatesPanel::setThumbnailer(Thumbnailer* thumbnailer) {
  m_thumbnailer = thumbnailer;
  static_cast<ItemStrip*>(m_list)->setThumbnailer(thumbnailer);
  m_members->setThumbnailer(thumbnailer);
}

void DuplicatesPanel::setDataset(std::shared_ptr<const Dataset> dataset) {
  m_jobs->cancel();
  ++m_generation;
  m_dataset = std::move(dataset);
  m_found = {};
  m_threshold.reset();
  m_groups = {};
  m_list->clear();
  m_members->clear();
  const bool any = m_dataset && m_dataset->size() >= 2;
  for (QWidget* w : std::initializer_list<QWidget*>{m_slider, m_distance})
    w->setEnabled(any);
  m_exportGroups->setEnabled(false);
  m_exportKeep->setEnabled(false);
  m_summary->setText(any ? tr("Move the slider or set a distance to find near-duplicates.")
                         : tr("Open a data set first."));
}

void DuplicatesPanel::setMetric(Metric metric) {
  if (metric == m_metric)
    return;
  m_metric = metric;
  setDataset(m_dataset); // distances of another metric: search again
}

void DuplicatesPanel::setQuantile(double q) {
  if (!m_dataset || m_dataset->size() < 2)
    return;
  q = std::clamp(q, 0.0, 1.0);
  if (m_found.reach >= 0)
    if (const std::optional<double> t = knownQuantile(m_found.nearest, q)) {
      m_threshold = *t;
      regroup();
      return;
    }
  m_wantedQuantile = q;
  search(std::min(1.0, std::max(q * kHeadroom, q + 0.005)), std::nullopt);
}

void DuplicatesPanel::setThreshold(double distance) {
  if (!m_dataset || m_dataset->size() < 2)
    return;
  if (m_found.reach >= 0 && distance <= m_found.reach) {
    m_threshold = distance;
    regroup();
    return;
  }
  m_wantedQuantile = -1;
  m_threshold = distance;
  search(std::nullopt, distance + 0.25 * std::abs(distance));
}

void DuplicatesPanel::search(std::optional<double> quantile, std::optional<double> distance) {
  const auto dataset = m_dataset;
  const Metric metric = m_metric;
  const Context context = m_context;
  const quint64 generation = ++m_generation;
  m_cancel->setEnabled(true);
  m_summary->setText(tr("Searching every pair…"));
  m_jobs->run<Found>(
      tr("Near-duplicates"),
      [dataset, metric, context, quantile, distance](JobControl& job) {
        Found found;
        const MatrixView<float> x = dataset->vectors.view();
        if (quantile) {
          QuantilePairs q = pairsWithinQuantile(x, *quantile, metric, context, job);
          found.reach = q.reach;
          found.nearest = std::move(q.nearest);
          found.pairs = std::move(q.pairs.pairs);
          found.report = q.pairs.report;
          found.seconds = q.pairs.seconds;
        } else {
          NearPairs p = pairsWithin(x, *distance, metric, context, job);
          found.reach = *distance;
          found.nearest.assign(std::size_t(x.rows), std::numeric_limits<double>::infinity());
          for (const NearPair& pair : p.pairs) {
            found.nearest[pair.a] = std::min(found.nearest[pair.a], pair.distance);
            found.nearest[pair.b] = std::min(found.nearest[pair.b], pair.distance);
          }
          found.pairs = std::move(p.pairs);
          found.report = p.report;
          found.seconds = p.seconds;
        }
        return found;
      },
      [this, generation](Found& found) {
        if (generation != m_generation)
          return; // a newer data set or search
        m_cancel->setEnabled(false);
        m_found = std::move(found);
        if (m_wantedQuantile >= 0)
          m_threshold = knownQuantile(m_found.nearest, m_wantedQuantile);
        regroup();
        emit searched();
      });
}

void DuplicatesPanel::regroup() {
  if (!m_dataset || !m_threshold)
    return;
  m_groups = groupPairs(m_dataset->size(), m_found.pairs, *m_threshold);
  showGroups();
  syncControls();
}

void DuplicatesPanel::showGroups() {
  const Dataset& ds = *m_dataset;
  std::vector<std::int32_t> firsts;
  std::vector<QString> captions;
  for (std::size_t g = 0; g < m_groups.groups.size(); ++g) {
    firsts.push_back(m_groups.groups[g].front());
    captions.push_back(tr("group %1 · %2 items").arg(g + 1).arg(m_groups.groups[g].size()));
  }
  auto* strip = static_cast<ItemStrip*>(m_list);
  strip->blockSignals(true);
  strip->setItems(ds, firsts, captions);
  strip->blockSignals(false);
  m_members->clear();
  const std::size_t pairs =
      std::size_t(std::count_if(m_found.pairs.begin(), m_found.pairs.end(),
                                [this](const NearPair& p) { return p.distance <= *m_threshold; }));
  const std::size_t groups = m_groups.groups.size();
  m_summary->setText(tr("%1 %2 · %3 %4 of %5 items (%6 beyond one per group) · distance ≤ %7 · "
                        "%8, %9 s")
                         .arg(pairs)
                         .arg(pairs == 1 ? tr("pair") : tr("pairs"))
                         .arg(groups)
                         .arg(groups == 1 ? tr("group") : tr("groups"))
                         .arg(m_groups.itemsInGroups())
                         .arg(m_groups.redundantItems())
                         .arg(*m_threshold, 0, 'g', 6)
                         .arg(QString::fromStdString(m_found.report.device),
                              QString::number(m_found.seconds, 'f', 2)));
  m_exportGroups->setEnabled(true);
  m_exportKeep->setEnabled(true);
}

void DuplicatesPanel::syncControls() {
  // The slider shows the share of items whose nearest other item lies within the threshold.
  m_syncing = true;
  const std::int64_t n = m_dataset->size();
  const auto within = std::count_if(m_found.nearest.begin(), m_found.nearest.end(),
                                    [this](double d) { return d <= *m_threshold; });
  const double share = n > 1 ? double(std::max<std::int64_t>(0, within - 1)) / double(n - 1) : 0;
  if (!m_slider->isSliderDown())
    m_slider->setValue(int(std::lround(std::min(share, kSliderSpan) / kSliderSpan * kSliderSteps)));
  m_distance->setValue(*m_threshold);
  m_syncing = false;
}

void DuplicatesPanel::chooseGroup(int index) {
  if (!m_dataset || index < 0 || std::size_t(index) >= m_groups.groups.size())
    return;
  const std::vector<std::int32_t>& members = m_groups.groups[std::size_t(index)];
  if (m_list->currentRow() != index) {
    m_list->blockSignals(true);
    m_list->setCurrentRow(index);
    m_list->blockSignals(false);
  }
  m_members->setItems(*m_dataset, members, {});
  emit groupChosen(std::vector<std::int64_t>(members.begin(), members.end()));
}

QStringList DuplicatesPanel::inputFiles() const {
  return m_session ? m_session->inputFiles() : QStringList();
}

bool DuplicatesPanel::exportGroups(const QString& path, QString* error) const {
  try {
    exportText(path, *m_dataset, duplicateGroupsTsv(m_groups, *m_dataset), inputFiles());
    return true;
  } catch (const std::exception& e) {
    if (error)
      *error = QString::fromStdString(e.what());
    return false;
  }
}

bool DuplicatesPanel::exportKeepList(const QString& path, QString* error) const {
  try {
    exportText(path, *m_dataset, keepOnePerGroup(m_groups, m_dataset->size()), inputFiles());
    return true;
  } catch (const std::exception& e) {
    if (error)
      *error = QString::fromStdString(e.what());
    return false;
  }
}

void DuplicatesPanel::observe(ExplorerSession* session) {
  m_session = session;
  connect(session, &ExplorerSession::dataChanged, this, [this, session] {
    setMetric(session->metric());
    setDataset(session->dataset());
  });
  connect(session, &ExplorerSession::metricChanged, this, &DuplicatesPanel::setMetric);
}

} // namespace nearscape::ui

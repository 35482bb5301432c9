#include "ClusterLabelsControl.h"

#include "ClusterLabelOverlay.h"
#include "ExplorerSession.h"
#include "JobRunner.h"
#include "MapView.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>

#include <algorithm>

namespace nearscape::ui {

ClusterLabelsControl::ClusterLabelsControl(ExplorerSession* session, MapView* map,
                                           const Context& context, QObject* parent)
    : QObject(parent), m_session(session), m_map(map), m_context(context),
      m_overlay(new ClusterLabelOverlay(map)), m_jobs(new JobRunner(this)),
      m_toggle(new QAction(tr("Cluster &Labels"), this)),
      m_columns(new QMenu(tr("Label &Column"))) {
  connect(this, &QObject::destroyed, m_columns, &QObject::deleteLater); // a menu has no parent
  m_toggle->setObjectName(QStringLiteral("clusterLabelsAction"));
  m_toggle->setCheckable(true);
  m_toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  m_toggle->setToolTip(tr("Name regions of the map by the most distinctive words of a text "
                          "column (finer regions as you zoom in)"));
  connect(m_toggle, &QAction::toggled, this, &ClusterLabelsControl::setShown);
  connect(m_columns, &QMenu::aboutToShow, this, [this] {
    if (m_checksStale)
      checkCurrentColumn();
  });
  connect(m_session, &ExplorerSession::dataChanged, this, &ClusterLabelsControl::onDataChanged);
  connect(m_session, &ExplorerSession::metadataChanged, this, [this] {
    m_source = {};
    m_defaultColumn.reset();
    rebuildColumnMenu();
    recompute();
  });
  connect(m_session, &ExplorerSession::layoutChanged, this, [this](int dim) {
    if (dim == m_session->mapDim()) {
      m_source = {};
      recompute();
    }
  });
  connect(m_session, &ExplorerSession::mapDimChanged, this, [this] {
    m_source = {};
    recompute();
  });
  connect(m_map, &MapView::visibleMaskChanged, this, [this] { recompute(); });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& why) {
    emit message(tr("Cluster labels: %1").arg(why), 10000);
  });
  rebuildColumnMenu();
}

void ClusterLabelsControl::addTo(QMenu& menu) {
  menu.addAction(m_toggle);
  menu.addMenu(m_columns);
}

bool ClusterLabelsControl::pending() const {
  return shown() && m_jobs->busy();
}

bool ClusterLabelsControl::shown() const {
  return m_toggle->isChecked();
}

void ClusterLabelsControl::setShown(bool on) {
  if (m_toggle->isChecked() != on) {
    m_toggle->setChecked(on); // toggled calls back here
    return;
  }
  if (on)
    recompute();
  else
    clear();
}

void ClusterLabelsControl::setColumn(const QString& name) {
  m_column = name;
  // Only the checks change: an action of the menu may be the caller (its triggered signal).
  checkCurrentColumn();
  recompute();
}

QString ClusterLabelsControl::column() const {
  const Dataset* data = m_session->dataset().get();
  if (!data)
    return {};
  if (!m_column.isEmpty() && data->metadata.findColumn(m_column.toStdString()) >= 0)
    return m_column;
  // The default reads every text of the metadata (about 60 ms for 1,500 descriptions): worked
  // out once a data set and metadata, when first asked for (the labels shown, the menu opened),
  // never while data opens.
  if (!m_defaultColumn) {
    const int c = defaultLabelColumn(*data);
    m_defaultColumn =
        c < 0 ? QString() : QString::fromStdString(data->metadata.columnNames[std::size_t(c)]);
  }
  return *m_defaultColumn;
}

void ClusterLabelsControl::setGranularities(std::vector<int> granularities) {
  m_granularities = std::move(granularities);
  m_source = {};
  recompute();
}

void ClusterLabelsControl::onDataChanged() {
  m_column.clear();
  m_defaultColumn.reset();
  clear();
  rebuildColumnMenu();
  recompute();
}

void ClusterLabelsControl::clear() {
  m_jobs->cancel();
  m_source = {};
  if (m_overlay->labels()) {
    m_overlay->setLabels(nullptr, 0);
    emit labelsChanged();
  }
}

void ClusterLabelsControl::rebuildColumnMenu() {
  m_columns->clear();
  delete m_columnGroup;
  m_columnGroup = new QActionGroup(this);
  const Dataset* data = m_session->dataset().get();
  if (data)
    for (std::size_t c = 0; c < data->metadata.columnNames.size(); ++c) {
      const QString name = QString::fromStdString(data->metadata.columnNames[c]);
      // Numbers and image paths name no region.
      if (int(c) == data->imageColumn || m_session->numericColumns().contains(name))
        continue;
      QAction* a = m_columns->addAction(QString(name).replace('&', QStringLiteral("&&")));
      a->setData(name); // the text doubles an '&' (no mnemonic)
      a->setCheckable(true);
      m_columnGroup->addAction(a);
      connect(a, &QAction::triggered, this, [this, name] { setColumn(name); });
    }
  m_columns->setEnabled(!m_columns->isEmpty());
  m_checksStale = true; // checked when the menu opens: the default column costs a pass
}

void ClusterLabelsControl::checkCurrentColumn() {
  const QString current = column();
  for (QAction* a : m_columns->actions())
    a->setChecked(a->data().toString() == current);
  m_checksStale = false;
}

void ClusterLabelsControl::recompute() {
  if (!shown())
    return;
  const std::shared_ptr<const Dataset> data = m_session->dataset();
  if (!data)
    return;
  const int dim = m_session->mapDim();
  const std::vector<float>& positions = m_session->layout(dim);
  const QString name = column();
  if (name.isEmpty()) {
    emit message(tr("Cluster labels need a text column: attach metadata with one "
                    "(File → Attach Metadata)"),
                 10000);
    m_toggle->setChecked(false);
    return;
  }
  if (positions.empty()) { // the map still refines: layoutChanged brings it
    clear();
    return;
  }
  // Hidden items (legend groups, a range) are left out: the labels name the regions drawn.
  std::vector<bool> visible = m_map->visibleMask();
  if (visible.size() != std::size_t(data->size()) ||
      std::find(visible.begin(), visible.end(), false) == visible.end())
    visible.clear();
  std::vector<std::int64_t> shownItems; // empty: every item
  for (std::size_t i = 0; i < visible.size(); ++i)
    if (visible[i])
      shownItems.push_back(std::int64_t(i));
  Source source{data.get(), name, dim, positions.data(), std::move(visible)};
  if (source == m_source)
    return; // shown already, or being computed
  m_source = std::move(source);
  if (!m_source.visible.empty() && shownItems.empty()) {
    m_jobs->cancel();
    if (m_overlay->labels()) {
      m_overlay->setLabels(nullptr, 0);
      emit labelsChanged();
    }
    emit message(tr("Cluster labels: the filter hides every item"), 6000);
    return;
  }
  ClusterLabelParams params;
  params.granularities = m_granularities;
  struct Result {
    std::shared_ptr<const ClusterLabels> labels;
    double area = 0;
  };
  const Context context = m_context;
  // The model may replace its map meanwhile: the job works on a copy of the items shown.
  std::vector<float> copied;
  if (shownItems.empty()) {
    copied = positions;
  } else {
    copied.reserve(shownItems.size() * std::size_t(dim));
    for (const std::int64_t i : shownItems)
      copied.insert(copied.end(), positions.begin() + i * dim, positions.begin() + (i + 1) * dim);
  }
  m_jobs->run<Result>(
      tr("Cluster labels"),
      [data, name, dim, params, context, copied, shownItems](JobControl& job) {
        std::vector<std::string> texts = labelTexts(*data, name.toStdString());
        if (!shownItems.empty()) {
          std::vector<std::string> shownTexts;
          shownTexts.reserve(shownItems.size());
          for (const std::int64_t i : shownItems)
            shownTexts.push_back(std::move(texts[std::size_t(i)]));
          texts = std::move(shownTexts);
        }
        const std::int64_t rows = std::int64_t(copied.size()) / dim;
        ClusterLabels labels =
            clusterLabels({copied.data(), rows, dim}, texts, params, context, job);
        if (!shownItems.empty()) // back to the data's ids; hidden items in no cluster
          for (ClusterLabelLevel& level : labels.levels) {
            for (ClusterLabel& label : level.labels)
              label.centreItem = shownItems[std::size_t(label.centreItem)];
            std::vector<std::int32_t> assignment(std::size_t(data->size()), -1);
            for (std::size_t s = 0; s < shownItems.size(); ++s)
              assignment[std::size_t(shownItems[s])] = level.assignment[s];
            level.assignment = std::move(assignment);
          }
        Result r;
        r.labels = std::make_shared<const ClusterLabels>(std::move(labels));
        r.area = ClusterLabelOverlay::robustArea(copied, dim);
        return r;
      },
      [this, data](Result& r) {
        if (m_session->dataset() != data || !shown())
          return;
        m_overlay->setLabels(r.labels, r.area);
        emit labelsChanged();
        const auto& levels = r.labels->levels;
        emit message(tr("Cluster labels: %1 levels, %2 to %3 clusters (zoom in for finer ones)")
                         .arg(levels.size())
                         .arg(levels.empty() ? 0 : levels.front().clusters)
                         .arg(levels.empty() ? 0 : levels.back().clusters),
                     6000);
      });
}

} // namespace nearscape::ui

#pragma once
// Near-duplicates of the open data set: a slider chooses the threshold as a share of the items
// (the quantile of every item's exact distance to its nearest other item) or a distance box sets
// it directly; the groups update live while the threshold stays within what the last search
// covered, and a new search starts by itself beyond it. Groups are listed by size with the first
// item's thumbnail or text; choosing one selects it on the map and lists its members. The groups
// export as TSV (the CLI's `duplicates --out` format) and as a keep-one-per-group list.

#include "nearscape/Nearscape.h"

#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSlider;
class QTimer;

namespace nearscape::ui {

class ExplorerSession;

class ItemStrip;
class JobRunner;
class Thumbnailer;

class DuplicatesPanel : public QWidget {
  Q_OBJECT
public:
  /// Follows `session`: its data set, metric.
  void observe(ExplorerSession* session);
  explicit DuplicatesPanel(Context context, QWidget* parent = nullptr);
  ~DuplicatesPanel() override;

  /// The data set searched (nullptr: none); forgets the last search.
  void setDataset(std::shared_ptr<const Dataset> dataset);
  void setContext(const Context& context) { m_context = context; }
  /// The metric distances are measured in (the data's, as the map uses). Forgets the search.
  void setMetric(Metric metric);
  void setThumbnailer(Thumbnailer* thumbnailer);

  /// Sets the threshold to the q-quantile of the nearest-other distances (0 ≤ q ≤ 1), as the
  /// slider does: live when the last search covers it, else a search starts.
  void setQuantile(double q);
  /// Sets the threshold to a distance, as the distance box does.
  void setThreshold(double distance);
  /// The threshold shown (a distance in the metric's units), when known.
  std::optional<double> threshold() const { return m_threshold; }
  /// The groups at the current threshold.
  const DuplicateGroups& groups() const { return m_groups; }
  /// Chooses group `index` as if its row were clicked.
  void chooseGroup(int index);
  /// Writes the groups (TSV) or the keep-one-per-group ids; false with the reason on failure.
  bool exportGroups(const QString& path, QString* error = nullptr) const;
  bool exportKeepList(const QString& path, QString* error = nullptr) const;

  QSlider* slider() const { return m_slider; }
  QDoubleSpinBox* distanceBox() const { return m_distance; }
  QListWidget* groupList() const { return m_list; }
  QLabel* summary() const { return m_summary; }
  JobRunner* jobs() const { return m_jobs; }

signals:
  /// A group was chosen: select these items.
  void groupChosen(const std::vector<std::int64_t>& items);
  /// An item of the chosen group was activated.
  void itemChosen(std::int64_t item);
  /// A search finished and the groups are shown.
  void searched();

private:
  /// The observed model's input files (none beyond the data's own before observe).
  QStringList inputFiles() const;
  QPointer<ExplorerSession> m_session; ///< whose input files no export may replace
  /// What the last search covered: every pair within `reach`, and each item's exact nearest
  /// distance where it is within `reach`.
  struct Found {
    std::vector<NearPair> pairs;
    std::vector<double> nearest;
    double reach = -1;
    RunReport report;
    double seconds = 0;
  };
  void search(std::optional<double> quantile, std::optional<double> distance);
  void regroup();
  void showGroups();
  void syncControls();

  Context m_context;
  std::shared_ptr<const Dataset> m_dataset;
  Metric m_metric = Metric::L2;
  QPointer<Thumbnailer> m_thumbnailer;
  JobRunner* m_jobs;
  QSlider* m_slider;
  QLabel* m_sliderText;
  QDoubleSpinBox* m_distance;
  QPushButton* m_cancel;
  QLabel* m_summary;
  QListWidget* m_list;
  ItemStrip* m_members;
  QPushButton* m_exportGroups;
  QPushButton* m_exportKeep;
  Found m_found;
  std::optional<double> m_threshold;
  double m_wantedQuantile = -1; ///< the slider's share while a search for it runs
  DuplicateGroups m_groups;
  quint64 m_generation = 0;
  bool m_syncing = false;
};

} // namespace nearscape::ui

#pragma once
// Index sweeps on the open data set: pick an index kind and its build parameters (controls drawn
// from the index's own parameter descriptions), run a sweep of its search settings against exact
// ground truth, watch the recall/QPS front fill in live, and choose a setting to see which true
// neighbours of the selected item it missed.

#include "nearscape/Nearscape.h"

#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace nearscape::ui {

class JobRunner;
class ParetoPlot;

class SweepPanel : public QWidget {
  Q_OBJECT
public:
  explicit SweepPanel(Context context, QWidget* parent = nullptr);
  ~SweepPanel() override;

  /// The data set sweeps run on (nullptr: none); forgets the last sweep.
  void setDataset(std::shared_ptr<const Dataset> dataset);
  /// The engine context of the next sweep (the backend chosen in the preferences).
  void setContext(const Context& context) { m_context = context; }
  /// The metric of the ground truth and the index (the data's, as the map uses). Clears results.
  void setMetric(Metric metric);
  Metric metric() const { return m_metric; }
  /// The item whose missed neighbours a chosen setting shows: held out as a query in the next
  /// sweep (beside the seeded sample).
  void setSelectedItem(std::int64_t item) { m_selectedItem = item; }
  /// Starts a sweep with the controls' values (cancels one running).
  void startSweep();
  /// Chooses row `index` as if its dot were clicked.
  void chooseRow(int index);

  ParetoPlot* plot() const { return m_plot; }
  QTableWidget* table() const { return m_table; }
  QComboBox* kindBox() const { return m_kind; }
  QSpinBox* queriesBox() const { return m_queries; }
  QPushButton* runButton() const { return m_run; }
  JobRunner* jobs() const { return m_jobs; }
  /// The data row whose misses rows list in the last sweep (−1 before one ran).
  std::int64_t missedQueryItem() const { return m_missedQueryItem; }

signals:
  void sweepFinished();
  /// The setting `setting` missed `missed` (data rows), true neighbours of data row `query`.
  void missedChosen(std::int64_t query, const std::vector<std::int32_t>& missed,
                    const QString& setting);

private:
  struct Split;
  void rebuildBuildControls();
  void addRow(const SweepRow& row);

  Context m_context;
  std::shared_ptr<const Dataset> m_dataset;
  Metric m_metric = Metric::L2;
  std::int64_t m_selectedItem = -1;
  JobRunner* m_jobs;
  QComboBox* m_kind;
  QSpinBox* m_k;
  QSpinBox* m_queries;
  QFormLayout* m_buildForm;
  std::map<std::string, QDoubleSpinBox*> m_buildBoxes;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QLabel* m_status;
  ParetoPlot* m_plot;
  QTableWidget* m_table;
  quint64 m_generation = 0;
  std::vector<std::int64_t> m_baseRows; ///< the last sweep's base row → data row
  std::int64_t m_missedQueryItem = -1;
};

} // namespace nearscape::ui

#pragma once
// Index sweeps on the open data set: pick an index kind and its build parameters (controls drawn
// from the index's own parameter descriptions), run a sweep of its search settings against exact
// ground truth, watch the recall/QPS front fill in live, and choose a setting to see which true
// neighbours of the selected item it missed.
//
// Each sweep is also a run of the panel's trade-off study (SweepStudy), which the Trade-off
// Studio draws: runs share one set of held-out queries (the seeded sample plus the item selected
// when the study began), their exact truth (computed once) and the exact search's reference
// timing; another k or number of queries begins a new study.

#include "nearscape/Nearscape.h"

#include <QColor>
#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace nearscape::ui {

class ExplorerSession;

class JobRunner;
class ParetoPlot;

class SweepPanel : public QWidget {
  Q_OBJECT
public:
  /// Follows `session`: its data set, metric and selected item.
  void observe(ExplorerSession* session);
  /// The files no export of the sweep (the Trade-off Studio's) may replace: the observed
  /// model's inputs, else the data's own.
  QStringList inputFiles() const;
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
  QPushButton* studioButton() const { return m_studioButton; }
  QPushButton* cancelButton() const { return m_cancel; }
  /// The build parameter controls, by name (the index's own).
  QDoubleSpinBox* buildBox(const std::string& name) const;
  const Dataset* dataset() const { return m_dataset.get(); }

  /// The runs measured so far (and the one being measured, its rows as they arrive) and the
  /// exact reference, all over the same queries.
  const SweepStudy& study() const { return m_study; }
  /// Each run's colour (kept when other runs are removed).
  std::vector<QColor> runColours() const;
  /// The run being measured, or −1.
  int runningRun() const { return m_runningRun; }
  /// What the next Run sweep builds: "graph build_k=32,degree=48".
  QString nextRunLabel() const;
  /// Removes run `index` (cancelling it when it is being measured).
  void removeRun(int index);
  /// Removes every run and forgets the queries: the next run begins a new study (with the item
  /// selected then).
  void clearStudy();
  /// Lists the misses of row `row` of run `run` (missedChosen), as a click on its dot does.
  void chooseStudyPoint(int run, int row);

signals:
  void sweepFinished();
  /// The study changed: a run began, a row was measured, a run ended or was removed.
  void studyChanged();
  /// The index kind or a build value changed (nextRunLabel()).
  void controlsChanged();
  /// The person asked for the Trade-off Studio.
  void studioRequested();
  /// The setting `setting` missed `missed` (data rows), true neighbours of data row `query`.
  void missedChosen(std::int64_t query, const std::vector<std::int32_t>& missed,
                    const QString& setting);

private:
  QPointer<ExplorerSession> m_session; ///< whose input files no export may replace
  void rebuildBuildControls();
  void addRow(const SweepRow& row);
  /// The controls are idle again unless a newer job runs.
  void jobEnded();

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
  QPushButton* m_studioButton;
  QLabel* m_status;
  ParetoPlot* m_plot;
  QTableWidget* m_table;
  quint64 m_generation = 0;
  std::vector<std::int64_t> m_baseRows; ///< the last sweep's base row → data row
  std::int64_t m_missedQueryItem = -1;

  SweepStudy m_study;
  std::vector<int> m_runSlots;                ///< each run's colour slot
  std::vector<ParameterValues> m_runRequests; ///< each run's build values as asked (to match)
  int m_runningRun = -1;
  int m_dockRun = -1; ///< the run the panel's own plot and table show
  /// The study's queries: k, how many, the item held out beside them; their exact truth.
  int m_studyK = 0;
  std::int64_t m_studyQueries = 0, m_studyItem = -1;
  std::optional<Matrix<std::int32_t>> m_studyTruth;
};

} // namespace nearscape::ui

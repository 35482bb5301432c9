#pragma once
// The most outlying items of the open data set, ranked: the local outlier factor or the
// distance to the k-th neighbour over the exact kNN graph (as `nearscape-cli outliers`), the top
// items listed with their thumbnails or text and scores; choosing one selects it on the map; the
// scores export as `.npy` (the CLI's --out) or TSV.

#include "nearscape/Nearscape.h"

#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace nearscape::ui {

class ExplorerSession;

class ItemStrip;
class JobRunner;
class Thumbnailer;

class OutliersPanel : public QWidget {
  Q_OBJECT
public:
  /// Follows `session`: its data set, metric.
  void observe(ExplorerSession* session);
  explicit OutliersPanel(Context context, QWidget* parent = nullptr);
  ~OutliersPanel() override;

  void setDataset(std::shared_ptr<const Dataset> dataset);
  void setContext(const Context& context) { m_context = context; }
  void setMetric(Metric metric);
  void setThumbnailer(Thumbnailer* thumbnailer);

  /// Scores every item with the controls' values (a background job; cancels one running).
  void score();
  /// Each item's score of the last run (empty before one).
  const std::vector<float>& scores() const { return m_scores; }
  /// The items listed, most outlying first.
  const std::vector<std::int64_t>& ranked() const { return m_ranked; }
  /// Writes the scores: `.npy` (float32, n × 1) or, for any other name, TSV (rank, id, score,
  /// then the metadata columns) of every item, most outlying first. False with the reason.
  bool exportScores(const QString& path, QString* error = nullptr) const;

  QComboBox* kindBox() const { return m_kind; }
  QSpinBox* kBox() const { return m_k; }
  QSpinBox* topBox() const { return m_top; }
  QPushButton* scoreButton() const { return m_run; }
  ItemStrip* list() const { return m_list; }
  QLabel* summary() const { return m_summary; }
  JobRunner* jobs() const { return m_jobs; }

signals:
  void itemChosen(std::int64_t item);
  void scored();

private:
  /// The observed model's input files (none beyond the data's own before observe).
  QStringList inputFiles() const;
  QPointer<ExplorerSession> m_session; ///< whose input files no export may replace
  void showRanking();

  Context m_context;
  std::shared_ptr<const Dataset> m_dataset;
  Metric m_metric = Metric::L2;
  JobRunner* m_jobs;
  QComboBox* m_kind;
  QSpinBox* m_k;
  QSpinBox* m_top;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QPushButton* m_export;
  QLabel* m_summary;
  ItemStrip* m_list;
  std::vector<float> m_scores;
  std::vector<std::int64_t> m_ranked;
  quint64 m_generation = 0;
};

} // namespace nearscape::ui

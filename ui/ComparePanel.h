#pragma once
// Two embeddings of the same items compared (File → Compare With…): a second file with the same
// row count (any dimension, its own metric) is opened in the background, each item's exact k
// nearest neighbours are found in both spaces, and the share they agree on (|A ∩ B| / k) becomes
// a colour-by column; the panel shows the mean, a histogram, and the items whose neighbourhoods
// changed most, a click selecting one. The second embedding's own 2D map (laid out from its exact
// graph) is kept for the maps side by side. `nearscape-cli compare A B` prints the same numbers
// (`--map-b` writes that map).

#include "nearscape/Nearscape.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QPushButton;
class QSpinBox;

namespace nearscape::ui {

class ExplorerSession;

class ItemStrip;
class JobRunner;
class Thumbnailer;

class ComparePanel : public QWidget {
  Q_OBJECT
public:
  /// Follows `session`: its data set, metric.
  void observe(ExplorerSession* session);
  explicit ComparePanel(Context context, QWidget* parent = nullptr);
  ~ComparePanel() override;

  /// The first embedding (the open data set) and its metric; forgets a comparison.
  void setDataset(std::shared_ptr<const Dataset> dataset, Metric metric);
  void setContext(const Context& context) { m_context = context; }
  void setThumbnailer(Thumbnailer* thumbnailer);
  /// Compares with the embedding in `path` (its metric: the file's, else L2), in the background.
  void compareWith(const QString& path);

  /// Each item's overlap of the last comparison (empty before one), and the other file.
  const std::vector<float>& overlap() const { return m_overlap; }
  QString otherPath() const { return m_otherPath; }
  /// The second embedding's 2D map of the last comparison (n × 2; empty before one).
  const std::vector<float>& otherMap() const { return m_otherMap; }
  /// The items listed, most changed first.
  const std::vector<std::int64_t>& mostChanged() const { return m_changed; }
  QSpinBox* kBox() const { return m_k; }
  /// True while a comparison runs.
  bool running() const;
  ItemStrip* list() const { return m_list; }
  QLabel* summary() const { return m_summary; }
  JobRunner* jobs() const { return m_jobs; }

signals:
  /// A comparison finished: colour by `values` under `column`.
  void compared(const QString& column, const std::vector<double>& values);
  void itemChosen(std::int64_t item);
  void failed(const QString& message);

private:
  Context m_context;
  std::shared_ptr<const Dataset> m_dataset;
  Metric m_metric = Metric::L2;
  JobRunner* m_jobs;
  QSpinBox* m_k;
  QPushButton* m_cancel;
  QLabel* m_summary;
  ItemStrip* m_list;
  std::vector<float> m_overlap;
  std::vector<float> m_otherMap;
  std::vector<std::int64_t> m_changed;
  QString m_otherPath;
  quint64 m_generation = 0;
};

} // namespace nearscape::ui

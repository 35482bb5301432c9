#pragma once
// The Facets dock (Embedding Atlas's cross-filtering): a chart per metadata column — histograms
// for numbers, values by count for categories — for the whole data, the items passing the
// brushes and the selection. Brushing a facet is an undoable edit of the model's facet filter;
// the map dims what the brushes leave out, and every other facet counts within them. Reading the
// columns and counting them run off the GUI thread (a drag across a histogram of millions of
// items recounts every facet at each step; a newer count cancels the older one).

#include "nearscape/core/Facets.h"

#include <QWidget>

#include <map>
#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QPushButton;
class QVBoxLayout;

namespace nearscape::ui {

class ExplorerSession;
class FacetChart;
class JobRunner;

class FacetsPanel : public QWidget {
  Q_OBJECT
public:
  explicit FacetsPanel(ExplorerSession* session, QWidget* parent = nullptr);

  /// The chart of `column` (null: no such facet, or its columns are still being read).
  FacetChart* chart(const QString& column) const;
  /// Brushes `column` (none: clears its brush), as a drag or click on its chart does.
  void brush(const QString& column, const std::optional<FacetBrush>& brush);
  /// The columns are read (in the background when data or metadata opens).
  bool ready() const { return m_columns != nullptr; }
  /// Items passing every brush (every item without one).
  std::int64_t passing() const { return m_passing; }
  JobRunner* jobs() const { return m_jobs; }
  JobRunner* countJobs() const { return m_countJobs; }
  /// The columns are being read, or the facets counted (the mask and charts not yet current).
  bool pending() const;

signals:
  /// The model's brushes cannot apply (a column the data lacks, a range on categories): the
  /// reason, once per change of brushes.
  void failed(const QString& message);
  void message(const QString& text, int msecs);

private:
  void readColumns();
  /// Counts every facet within the model's brushes and selection; gives the model its mask.
  void recount();

  ExplorerSession* m_session;
  JobRunner* m_jobs;      ///< reads the columns
  JobRunner* m_countJobs; ///< counts them (its own: a count must not cancel the read)
  QLabel* m_summary;
  QLineEdit* m_search;
  QPushButton* m_clear;
  QWidget* m_list;
  QVBoxLayout* m_listLayout;
  std::shared_ptr<const std::vector<FacetColumn>> m_columns;
  std::map<QString, FacetChart*> m_charts;
  std::int64_t m_passing = 0;
};

} // namespace nearscape::ui

#pragma once
// View → Cluster Labels: computes the labels of the shown map off the GUI thread (its own
// JobRunner, so that it never stops the exploration's jobs) from the chosen text column, and
// hands them to the map's ClusterLabelOverlay. Observes the model: new data, other metadata, a
// refined map or the other dimension's map recompute them while they are shown; so does a
// filter that hides items (legend groups, a range): the labels name what is drawn.

#include "nearscape/Nearscape.h"

#include <QObject>
#include <QString>

#include <optional>

class QAction;
class QActionGroup;
class QMenu;

namespace nearscape::ui {

class ClusterLabelOverlay;
class ExplorerSession;
class JobRunner;
class MapView;

class ClusterLabelsControl : public QObject {
  Q_OBJECT
public:
  ClusterLabelsControl(ExplorerSession* session, MapView* map, const Context& context,
                       QObject* parent = nullptr);

  /// Adds the "Cluster Labels" toggle and the "Label Column" choice to `menu`.
  void addTo(QMenu& menu);
  QAction* toggleAction() const { return m_toggle; }
  QMenu* columnMenu() const { return m_columns; }

  /// Shows (computing them when needed) or hides the labels; the toggle follows.
  void setShown(bool on);
  bool shown() const;
  /// The text column to label with (empty: defaultLabelColumn's); recomputes when shown.
  void setColumn(const QString& name);
  /// The column the labels are (or will be) computed from; empty when the data has none.
  QString column() const;
  /// The clusters per level, coarse to fine.
  void setGranularities(std::vector<int> granularities);

  /// True while labels that are shown are being computed (a screenshot waits for them).
  bool pending() const;

  ClusterLabelOverlay* overlay() const { return m_overlay; }
  JobRunner* jobs() const { return m_jobs; }

signals:
  /// A line for the status bar (what was computed, or why nothing could be), for `msecs`.
  void message(const QString& text, int msecs);
  /// New labels are shown (or none, after they were cleared).
  void labelsChanged();

private:
  void onDataChanged();
  void rebuildColumnMenu();
  /// Checks the menu's entry of column().
  void checkCurrentColumn();
  /// Computes the labels of the shown map when they are shown and the map is refined.
  void recompute();
  void clear();

  ExplorerSession* m_session;
  MapView* m_map;
  Context m_context;
  ClusterLabelOverlay* m_overlay;
  JobRunner* m_jobs;
  QAction* m_toggle;
  QMenu* m_columns;
  QActionGroup* m_columnGroup = nullptr;
  QString m_column; ///< chosen by the person; empty: the default
  bool m_checksStale = true;
  /// defaultLabelColumn's answer for the data and metadata shown (none: not yet asked).
  mutable std::optional<QString> m_defaultColumn;
  std::vector<int> m_granularities = ClusterLabelParams{}.granularities;
  /// What the labels shown (or being computed) were made from: data, column, map dimension.
  struct Source {
    const Dataset* data = nullptr;
    QString column;
    int dim = 0;
    const float* positions = nullptr;
    std::vector<bool> visible; ///< the map's visible mask (empty: every item)
    bool operator==(const Source&) const = default;
  };
  Source m_source;
};

} // namespace nearscape::ui

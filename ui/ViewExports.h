#pragma once
// File → Export and the selection's export: what the explorer shows, written through the
// engine's output set (ui/Export.h), never over any of the model's input files
// (ExplorerSession::inputFiles). A failure goes to `failed`; each returns success.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QWidget>

#include <functional>
#include <vector>

namespace nearscape::ui {

class ExplorerSession;
class ItemInspector;
class MapView;

class ViewExports : public QObject {
  Q_OBJECT
public:
  ViewExports(const ExplorerSession* session, MapView* map, const ItemInspector* inspector,
              QObject* parent);

  /// The map's coordinates (.npy or TSV by the name).
  bool map(const QString& path);
  /// The neighbours listed for the selected item (TSV).
  bool neighbours(const QString& path);
  /// The path shown (TSV or JSON by the name).
  bool path(const QString& path);
  /// A picture of the map (PNG), with what the overlays draw over it where they are shown.
  bool picture(const QString& path);
  /// A widget drawn over the map (a child covering it, e.g. the cluster labels) whose drawing
  /// belongs in the map's picture while it is visible.
  void addPictureOverlay(QWidget* overlay);
  /// The selected items and their metadata (TSV).
  bool selection(const QString& path);
  /// Writes by `write`, reporting the outcome (a message, or `failed`).
  bool run(const QString& what, const std::function<void()>& write);

signals:
  void written(const QString& message, int msecs);
  void failed(const QString& title, const QString& message);

private:
  const ExplorerSession* m_session;
  MapView* m_map;
  const ItemInspector* m_inspector;
  std::vector<QPointer<QWidget>> m_overlays;
};

} // namespace nearscape::ui

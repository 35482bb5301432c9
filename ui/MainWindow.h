#pragma once
// The main window: the map in the middle, the legend beside it, jobs in the status bar.

#include "nearscape/Nearscape.h"

#include <QMainWindow>

#include <memory>

class QLabel;
class QMenu;
class QProgressBar;
class QToolButton;

namespace nearscape::ui {

class HoverCard;
class JobRunner;
class LegendPanel;
class MapView;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(Context context = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a file or IDX folder in the background, then shows its PCA map.
  void openPath(const QString& path, const QString& metaPath = {});
  /// Reads metadata for the open data set in the background and recolours the map.
  void attachMetadataFile(const QString& metaPath);

  MapView* mapView() const { return m_map; }
  LegendPanel* legend() const { return m_legend; }
  HoverCard* hoverCard() const { return m_hoverCard; }
  JobRunner* jobs() const { return m_jobs; }
  const Dataset* dataset() const { return m_dataset.get(); }
  /// The last error shown to the person, or empty.
  QString lastError() const { return m_lastError; }
  /// The status bar's summary (n, d, backend).
  QString summaryText() const;

signals:
  /// The map of a newly opened data set is on screen.
  void mapShown();
  /// Opening or computing failed; the message was shown.
  void loadFailed(const QString& message);

protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  struct Loaded;
  void buildMenus();
  void showLoaded(Loaded& loaded);
  void applyVisibility();
  void showError(const QString& title, const QString& message);
  void showHover(std::int64_t item, const QPoint& globalPos);

  Context m_context;
  MapView* m_map;
  LegendPanel* m_legend;
  HoverCard* m_hoverCard;
  JobRunner* m_jobs;
  QLabel* m_summary;
  QProgressBar* m_progress;
  QToolButton* m_cancel;
  QMenu* m_examples = nullptr;
  std::shared_ptr<const Dataset> m_dataset;
  QString m_lastError;
  QString m_backendText;
};

} // namespace nearscape::ui

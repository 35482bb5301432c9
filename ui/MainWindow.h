#pragma once
// The main window: assembles the model (ExplorerSession), the maps, the docks, the menus and the
// status line. State lives in the model and panels observe it; the window only wires them and
// keeps the operations a menu, the command line or a test calls.

#include "ColourControls.h"
#include "Docks.h"
#include "ExplorationJobs.h"
#include "ExplorerSession.h"
#include "Finder.h"
#include "MapPair.h"
#include "MapView.h"
#include "Menus.h"
#include "Preferences.h"
#include "Session.h"
#include "nearscape/Nearscape.h"

#include <QMainWindow>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QStackedWidget;

namespace nearscape::ui {

class ClusterLabelsControl;
class ComparePanel;
class DuplicatesPanel;
class HoverCard;
class ItemInspector;
class ItemStrip;
class JobRunner;
class LegendPanel;
class MissingDataPage;
class OutliersPanel;
class StatusLine;
class SweepPanel;
class Thumbnailer;
class TradeoffStudio;
class ViewExports;
class WelcomePage;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(Context context = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// The model: what is being explored.
  ExplorerSession* session() const { return m_session; }
  const Context& context() const { return m_context; }

  /// Opens a file or IDX folder in the background, then shows its PCA map. Transactional: the
  /// data is read whole (and its PCA computed) first, and only then replaces the model's; a
  /// failed open leaves the data, the exploration, the selection and the session as they were.
  void openPath(const QString& path, const QString& metaPath = {});
  /// Reads metadata for the open data set in the background and recolours the map.
  void attachMetadataFile(const QString& metaPath);
  /// Compares the open embedding with the one in `path` (the Compare dock).
  void compareWith(const QString& path);

  /// Selects `item`: marks it and lists its exact nearest neighbours (once the graph exists).
  void selectItem(std::int64_t item);
  /// Clears the selected item, its path and the selection (Escape, a click on empty space); the
  /// selection's change is undoable.
  void deselect();
  /// Shows the hover card of `item` near `globalPos` (hides it for -1), as the mouse does.
  void showHover(std::int64_t item, const QPoint& globalPos);
  /// Shows the min-max path from the selected item to `item` on the map and in the path strip.
  /// When they lie in different components, offers to join the components.
  void showPathTo(std::int64_t item);
  /// Joins the graph's components with their exact nearest cross-component edges (in the
  /// background), then shows the path to `retryTo` (when ≥ 0).
  void bridgeComponentsAndRetry(std::int64_t retryTo);
  /// Lists and rings the true neighbours of `query` that the sweep setting `setting` missed.
  void showMissed(std::int64_t query, const std::vector<std::int32_t>& missed,
                  const QString& setting);

  /// The metric every stage uses (graph, neighbours, paths, map, sweep): the file's own (an
  /// HDF5 `distance` attribute), else the one chosen here or with --metric, else L2. Choosing one
  /// rebuilds what depends on it; it stays the choice for files that declare none.
  void setMetric(Metric metric);
  Metric metric() const { return m_session->metric(); }
  /// Applies and stores Edit → Preferences: the graph's k and method and the backend rebuild the
  /// graph and what stands on it; the neighbours listed refresh the selection's list.
  void setPreferences(const Preferences& preferences);
  const Preferences& preferences() const { return m_prefs; }
  /// A metric that overrides even the file's (the command line's --metric).
  void forceMetric(Metric metric);

  /// Colours the map by `name`: "label", a metadata column, or a computed column (see
  /// colourChoices()). Categories fill the legend (which hides groups); numbers show a colour
  /// bar. Returns false (and changes nothing) for an unknown name. A metadata column is read in
  /// the background (as map trust and outlier scores are computed): the colours change when it
  /// arrives, unless another colouring was chosen meanwhile; viewPending() says it is under way.
  /// An undoable edit (Edit → Undo).
  bool setColourBy(const QString& name) { return m_colours->setColourBy(name); }
  QStringList colourChoices() const { return m_colours->colourChoices(); }
  /// The colouring shown (not one still being read or computed).
  QString colourBy() const { return m_colours->colourBy(); }
  /// The computed column "map trust": per item, the share of its exact 10 nearest neighbours
  /// among its 10 nearest on the map shown (refined maps only).
  QString trustColumn() const { return ColourControls::trustColumn(); }
  /// The computed column "outlier score": each item's local outlier factor over its exact 10-NN.
  QString outlierColumn() const { return ColourControls::outlierColumn(); }
  /// Names items by metadata column `name` beside `#id` in the hover card, the neighbour list
  /// and the path strip (empty: none); picked on its own when data opens (core/TitleColumn).
  /// False, and nothing changes, for a column the metadata lacks.
  bool setTitleColumn(const QString& name) { return m_session->setTitleColumn(name); }
  QString titleColumn() const { return m_session->titleColumnName(); }
  /// Fades items by a numeric metadata column (largest opaque, smallest faint), read in the
  /// background; "none" or "" clears it. False for a column that is not numeric.
  bool setOpacityBy(const QString& name) { return m_colours->setOpacityBy(name); }
  QString opacityBy() const { return m_colours->opacityBy(); }
  /// Draws items larger by a numeric column (four sizes; read in the background), or all alike
  /// ("none"). False for an unknown column.
  bool setSizeBy(const QString& name) { return m_colours->setSizeBy(name); }
  QString sizeBy() const { return m_colours->sizeBy(); }
  /// The numeric metadata columns opacity and size can follow.
  QStringList opacityChoices() const { return m_colours->opacityChoices(); }
  /// Under a numeric colouring, shows only items whose value lies in [from, to] (false when the
  /// colouring is not numeric, or from > to); while a colouring is read or computed, the range
  /// waits for it. An undoable edit.
  bool setShownRange(double from, double to) { return m_colours->setShownRange(from, to); }
  std::optional<std::pair<double, double>> shownRange() const { return m_colours->shownRange(); }
  /// Finds items whose id or metadata matches `text` (a regular expression when `regex`), in the
  /// background (Finder); searchFinished when the matches are on the map.
  void setSearch(const QString& text, bool regex = false) { m_finder->setSearch(text, regex); }
  /// Stops the search under way; searchFinished. Nothing while none runs.
  void cancelSearch() { m_finder->cancel(); }
  /// The items the last finished search matches (sorted ids).
  const std::vector<std::int64_t>& searchMatches() const { return m_session->matches(); }
  /// Selects the first match and centres the map on it; while a search runs, once it has ended.
  void goToFirstMatch() { m_finder->goToFirstMatch(); }
  /// Puts the keyboard in the search field (Edit → Find).
  void focusSearch() { m_finder->focus(); }
  /// True while a search, or a colouring, opacity or size column, is read in the background.
  bool viewPending() const;

  /// The selection (sorted item ids): an undoable edit of the model's.
  void setSelection(std::vector<std::int64_t> items) { m_session->editSelection(std::move(items)); }
  const std::vector<std::int64_t>& selection() const { return m_session->selection(); }
  void invertSelection();
  void growSelection();
  bool exportSelectionTo(const QString& path);
  /// The map's drag tool: pan (P), lasso (L) or rectangle (R).
  void setDragTool(int tool);

  /// File → Save Session / Open Session (ui/Session.h). Opening reads the session, opens its data
  /// (refused when the data changed since), then restores the model (metric, colouring, filter,
  /// search, selection), the panels and, once the graph exists, the item, the path and camera.
  Session currentSession() const;
  bool saveSessionTo(const QString& path);
  void openSession(const QString& path);
  /// A session whose data could not be opened (moved, deleted, unreadable, or changed since)
  /// shows a page that says why and offers to locate the file (MissingDataPage); this opens
  /// `dataPath` in its place. The session is restored when the content hash is the session's;
  /// another file is refused with the reason and the page stays. False when no session waits.
  bool locateSessionData(const QString& dataPath);
  /// The session waiting for its data to be located, if any.
  const std::optional<Session>& unopenedSession() const { return m_unopenedSession; }
  MissingDataPage* missingDataPage() const { return m_missing; }
  /// Replaces how the page's Locate asks for a file (tests: no dialog); given the file the
  /// session names, returns the one chosen or empty.
  void setFileChooser(std::function<QString(const QString& missing)> choose) {
    m_chooseFile = std::move(choose);
  }

  /// File → Export: the map's coordinates, the shown neighbours, the path, a picture of the map.
  /// A failure is shown as an error; returns success.
  bool exportMapTo(const QString& path);
  bool exportNeighboursTo(const QString& path);
  bool exportPathTo(const QString& path);
  bool exportPictureTo(const QString& path);
  /// The files read, which none of the window's or panels' outputs may replace.
  QStringList inputFiles() const;
  /// File → Clear the Cache.
  void clearCache();

  void setMapDimension(int dim);
  int mapDimension() const { return m_session->mapDim(); }
  bool mapRefined(int dim) const { return m_session->mapRefined(dim); }
  void setDensityMode(MapView::DensityMode mode);

  MapView* mapView() const { return m_maps->map(); }
  MapView* otherMapView() const { return m_maps->otherMap(); }
  /// Shows or hides the maps side by side; false when no comparison has made a second map.
  bool showMapsSideBySide(bool on);
  SweepPanel* sweepPanel() const { return m_sweep; }
  TradeoffStudio* tradeoffStudio() const { return m_studio; }
  void showTradeoffStudio();
  DuplicatesPanel* duplicatesPanel() const { return m_duplicates; }
  OutliersPanel* outliersPanel() const { return m_outlierPanel; }
  ComparePanel* comparePanel() const { return m_compare; }
  ClusterLabelsControl* clusterLabels() const { return m_clusterLabels; }
  ItemStrip* neighboursPanel() const { return m_neighbours; }
  ItemStrip* pathStrip() const { return m_pathStrip; }
  JobRunner* pipelineJobs() const { return m_exploration->pipelineJobs(); }
  JobRunner* searchJobs() const { return m_finder->jobs(); }
  bool explorationReady() const { return m_session->artefacts() != nullptr; }
  const GraphPath& lastPath() const { return m_session->path(); }
  std::int64_t selectedItem() const { return m_session->selectedItem(); }
  LegendPanel* legend() const { return m_colours->legend(); }
  HoverCard* hoverCard() const { return m_hoverCard; }
  Thumbnailer* thumbnailer() const { return m_thumbnailer; }
  JobRunner* jobs() const { return m_jobs; }
  WelcomePage* welcomePage() const { return m_welcome; }
  const Dataset* dataset() const { return m_session->dataset().get(); }
  const Docks& docks() const { return m_docks; }
  const MenuActions& menuActions() const { return m_actions; }
  /// The last error shown to the person, or empty.
  QString lastError() const { return m_lastError; }
  /// Shows an error: the status bar, `errorDisplay` (a non-modal box by default), loadFailed.
  void showError(const QString& title, const QString& message);
  /// Replaces how errors are shown to the person (tests: no box at all).
  void setErrorDisplay(std::function<void(const QString& title, const QString& message)> show) {
    m_errorDisplay = std::move(show);
  }
  QString summaryText() const;

signals:
  void mapShown();
  void loadFailed(const QString& message);
  void explorationFinished();
  void layoutFinished(int dim);
  void componentsDisconnected(std::int64_t from, std::int64_t to, int components);
  void searchFinished();

protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  void buildExploreBar();
  void connectPanels();
  void onMapDimChanged(int dim);
  /// Puts `opened` into the model (the only place a new data set enters it).
  void commitOpened(OpenedData& opened);
  void showData();
  void onExplored();
  void restartExploration();
  void onMapClicked(std::int64_t item, Qt::KeyboardModifiers modifiers);
  void onSelectionDrawn(const QPolygonF& polygon, Qt::KeyboardModifiers modifiers);
  void showOtherMap();
  void updateBackendText();
  /// The cache, the graph's k and method and the neighbours listed, from m_prefs.
  void applyPreferences();
  void updateMetricMenu();
  /// The parts of a pending session that need the data (false: it is for other data).
  bool applySessionToData();
  /// The parts that need the graph.
  void applyPendingSession();
  /// The pending session's data could not be opened (`reason`): the missing-data page.
  void showSessionDataProblem(const QString& reason);

  Context m_context;
  /// The GPU starts while the window opens and the first file is read (joined on close).
  std::unique_ptr<DeviceWarmUp> m_deviceWarmUp = std::make_unique<DeviceWarmUp>(m_context);
  Preferences m_prefs;
  /// Graphs and maps computed before, keyed by the data's content hash (instant reopen).
  ArtefactCache m_cache{ArtefactCache::defaultFolder(), ArtefactCache::kDefaultMaxBytes};
  ExplorerSession* m_session;
  MapPair* m_maps;
  HoverCard* m_hoverCard;
  Thumbnailer* m_thumbnailer;
  JobRunner* m_jobs; ///< opening, metadata, a clicked item's neighbours
  ExplorationJobs* m_exploration;
  ColourControls* m_colours = nullptr;
  Finder* m_finder = nullptr;
  ItemInspector* m_inspector = nullptr;
  ViewExports* m_exports = nullptr;
  ClusterLabelsControl* m_clusterLabels = nullptr;
  StatusLine* m_status;
  ItemStrip* m_neighbours;
  ItemStrip* m_pathStrip;
  SweepPanel* m_sweep;
  TradeoffStudio* m_studio = nullptr;
  DuplicatesPanel* m_duplicates;
  OutliersPanel* m_outlierPanel;
  ComparePanel* m_compare;
  WelcomePage* m_welcome = nullptr;
  QStackedWidget* m_central = nullptr;
  Docks m_docks{};
  MenuActions m_actions;
  Metric m_chosenMetric = Metric::L2;       ///< for files that declare none
  bool m_metricForced = false;              ///< --metric, or a session's: over the file's too
  std::optional<Session> m_pendingSession;  ///< being applied while its data opens
  QString m_pendingSessionPath;             ///< its file
  QString m_openingTitle;                   ///< the job title of the open under way
  std::optional<Session> m_unopenedSession; ///< waits for its data to be located
  QString m_unopenedSessionPath;
  MissingDataPage* m_missing = nullptr;
  std::function<QString(const QString&)> m_chooseFile;
  QString m_lastError;
  QString m_backendText;
  std::function<void(const QString&, const QString&)> m_errorDisplay;
};

} // namespace nearscape::ui

#pragma once
// The main window: the map in the middle, the legend beside it, jobs in the status bar.

#include "MapView.h"
#include "Preferences.h"
#include "Session.h"
#include "nearscape/Nearscape.h"

#include <QMainWindow>
#include <QPointer>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QToolButton;

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QPolygonF;
class QSplitter;
class QStackedWidget;

namespace nearscape::ui {

class Thumbnailer;

class ColorBar;
struct ColourScheme;
class HoverCard;
class ItemStrip;
class JobRunner;
class LegendPanel;
class SweepPanel;
class TradeoffStudio;
class DuplicatesPanel;
class OutliersPanel;
class ComparePanel;
class WelcomePage;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(Context context = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a file or IDX folder in the background, then shows its PCA map.
  void openPath(const QString& path, const QString& metaPath = {});
  /// Reads metadata for the open data set in the background and recolours the map.
  void attachMetadataFile(const QString& metaPath);

  /// Selects `item`: marks it and lists its exact nearest neighbours (once the graph exists).
  void selectItem(std::int64_t item);
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
  Metric metric() const { return m_metric; }
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
  bool setColourBy(const QString& name);
  /// What the map can be coloured by now: "label", the metadata columns, and the computed
  /// columns once the graph exists.
  QStringList colourChoices() const;
  /// The colouring shown (not one still being read or computed).
  QString colourBy() const;
  /// The computed column "map trust": per item, the share of its exact 10 nearest neighbours
  /// among its 10 nearest on the map shown (refined maps only).
  QString trustColumn() const;
  /// The computed column "outlier score": each item's local outlier factor over its exact 10-NN.
  QString outlierColumn() const;
  /// Fades items by a numeric metadata column (largest opaque, smallest faint), read in the
  /// background; "none" or "" clears it. False for a column that is not numeric.
  bool setOpacityBy(const QString& name);
  /// That column, or "" when none.
  QString opacityBy() const { return m_opacityColumn; }
  /// Draws items larger by a numeric column (four sizes from its smallest to its largest value;
  /// items without a value at the normal size; read in the background), or all alike ("none").
  /// False for an unknown column.
  bool setSizeBy(const QString& name);
  QString sizeBy() const { return m_sizeColumn; }
  /// The numeric metadata columns opacity can follow.
  QStringList opacityChoices() const;
  /// Under a numeric colouring, shows only items whose value lies in [from, to] (false when the
  /// colouring is not numeric, or from > to). While a colouring is read or computed, the range
  /// waits for it.
  bool setShownRange(double from, double to);
  /// That range; none when every item is shown or the colouring is not numeric.
  std::optional<std::pair<double, double>> shownRange() const;
  /// Finds items whose id or metadata matches `text` (a regular expression when `regex`): they
  /// stay bright, the rest are dimmed. An empty text clears the search at once; any other runs
  /// in the background (a new search stops the one running, whose result is dropped), and the
  /// matches change when it ends (searchFinished). An invalid expression is reported in the
  /// status bar and matches nothing.
  void setSearch(const QString& text, bool regex = false);
  /// Stops the search under way (the bar's stop button, Escape in the search field): no item
  /// is matched, the bar says it stopped, and searchFinished is emitted. Nothing while none runs.
  void cancelSearch();
  /// The items the last finished search matches (sorted ids).
  const std::vector<std::int64_t>& searchMatches() const { return m_matches; }
  /// Selects the first match and centres the map on it (Enter in the search field); while a
  /// search runs, once it has ended.
  void goToFirstMatch();
  /// True while a search, or a colouring, opacity or size column, is read in the background.
  bool viewPending() const;

  /// The selection (lasso, rectangle, or set here): sorted item ids. It stays bright on the map,
  /// the rest fade; the selection panel counts it by label and lists it.
  void setSelection(std::vector<std::int64_t> items);
  const std::vector<std::int64_t>& selection() const { return m_selection; }
  /// Everything not selected becomes the selection.
  void invertSelection();
  /// Adds the kNN-graph neighbours of every selected item (once the graph exists).
  void growSelection();
  bool exportSelectionTo(const QString& path);
  /// The map's drag tool: pan (P), lasso (L) or rectangle (R).
  void setDragTool(int tool);

  /// File → Save Session / Open Session (ui/Session.h): what is being looked at, to reproduce
  /// it later. Opening reads the session, opens its data (refused when the data changed since),
  /// then restores the metric, colouring, search, hidden classes, selection, panels and, once the
  /// graph exists, the selected item, the path and the camera.
  Session currentSession() const;
  bool saveSessionTo(const QString& path);
  void openSession(const QString& path);

  /// File → Export: the map's coordinates (.npy or TSV), the shown neighbours (TSV), the path
  /// (TSV or JSON), a picture of the map (PNG). A failure is shown as an error; returns success.
  bool exportMapTo(const QString& path);
  bool exportNeighboursTo(const QString& path);
  bool exportPathTo(const QString& path);
  bool exportPictureTo(const QString& path);
  /// The files this window read, which none of its outputs may replace: the data, its metadata
  /// (given or the sidecar beside it), the session opened and the file compared with.
  QStringList inputFiles() const;

  /// Shows the map in 2 or 3 dimensions: the refined layout of that dimension when it exists,
  /// else its PCA view while the layout is computed (once the kNN graph exists).
  void setMapDimension(int dim);
  int mapDimension() const { return m_mapDim; }
  /// True once the layout of `dim` dimensions is refined for the open data set.
  bool mapRefined(int dim) const { return !m_layouts[std::size_t(dim == 3)].empty(); }

  /// How the map draws crowded points (View → Point Density, or --density).
  void setDensityMode(MapView::DensityMode mode);

  MapView* mapView() const { return m_map; }
  /// The second embedding's map beside the first (File → Compare With…; hidden until then):
  /// the same items, coloured alike, hover, selection and paths shown on both.
  MapView* otherMapView() const { return m_otherMap; }
  /// Shows or hides the maps side by side (View → Maps Side by Side); false when no comparison
  /// has produced a second map yet.
  bool showMapsSideBySide(bool on);
  SweepPanel* sweepPanel() const { return m_sweep; }
  /// The Trade-off Studio window (View → Trade-off Studio): the sweep panel's study full size.
  TradeoffStudio* tradeoffStudio() const { return m_studio; }
  /// Shows and raises it.
  void showTradeoffStudio();
  DuplicatesPanel* duplicatesPanel() const { return m_duplicates; }
  OutliersPanel* outliersPanel() const { return m_outlierPanel; }
  ComparePanel* comparePanel() const { return m_compare; }
  ItemStrip* neighboursPanel() const { return m_neighbours; }
  ItemStrip* pathStrip() const { return m_pathStrip; }
  JobRunner* pipelineJobs() const { return m_pipelineJobs; }
  JobRunner* searchJobs() const { return m_searchJobs; }
  /// True once the kNN graph, the refined map and the spanning forest exist.
  bool explorationReady() const { return m_explore != nullptr; }
  /// The last path shown (empty when none).
  const GraphPath& lastPath() const { return m_lastPath; }
  std::int64_t selectedItem() const { return m_selected; }
  LegendPanel* legend() const { return m_legend; }
  HoverCard* hoverCard() const { return m_hoverCard; }
  Thumbnailer* thumbnailer() const { return m_thumbnailer; }
  JobRunner* jobs() const { return m_jobs; }
  /// The page shown until data is open.
  WelcomePage* welcomePage() const { return m_welcome; }
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
  /// The kNN graph, the refined map and the spanning forest are ready.
  void explorationFinished();
  /// The layout of `dim` dimensions finished refining.
  void layoutFinished(int dim);
  /// A path was asked for between two components; the offer to join them is on screen.
  void componentsDisconnected(std::int64_t from, std::int64_t to, int components);
  /// A search's matches are on the map (searchMatches()).
  void searchFinished();

protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  /// The status bar's backend text and tooltip, from m_context.
  void updateBackendText();
  struct Loaded;
  struct Exploration;
  void buildMenus();
  void startExploration();
  /// Drops the graph, maps and selection and builds them again (a new metric, k or method).
  void restartExploration();
  /// Refines the map of `dim` dimensions from its PCA view through the existing kNN graph.
  void startLayout(int dim);
  /// The PCA view in `dim` dimensions (n × dim).
  std::vector<float> pcaView(int dim) const;
  /// The explore pipeline's hooks for the map of `dim` dimensions (run on a job's thread): read
  /// back from the artefact cache under `mapKey` or stored there once computed, started from the
  /// PCA view `start`, its positions streamed to the map while it shows `dim`.
  static void addMapStages(ExploreStages& stages, const QPointer<MainWindow>& self,
                           const std::shared_ptr<const Dataset>& dataset,
                           const ArtefactCache& cache, const std::string& mapKey, int dim,
                           const std::shared_ptr<const std::vector<float>>& start);
  void onMapClicked(std::int64_t item, Qt::KeyboardModifiers modifiers);
  void showLoaded(Loaded& loaded);
  void applyVisibility();
  /// The overlay (selected item, rings, path, far links) on the map, and on the second map
  /// when it is shown; `hovered` rings that item on the map the mouse is not over.
  void setMapOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                     const std::vector<std::int32_t>& path,
                     const std::vector<std::int32_t>& far = {});
  void linkHover(const MapView* from, std::int64_t item);
  void setMapColors(const std::vector<std::uint8_t>& rgb);
  void setMapVisible(std::vector<bool> visible);
  void showOtherMap();
  void computeTrust();
  void computeOutliers();
  /// Of `neighbours` (true neighbours of `item`), those the refined map shown places beyond the
  /// item's own neighbours.size()-th nearest point on the map (none before the map is refined).
  std::vector<std::int32_t> farInMap(std::int64_t item,
                                     const std::vector<std::int32_t>& neighbours) const;
  void showError(const QString& title, const QString& message);

  Context m_context;
  /// The GPU starts while the window opens and the first file is read (joined on close).
  std::unique_ptr<DeviceWarmUp> m_deviceWarmUp = std::make_unique<DeviceWarmUp>(m_context);
  Preferences m_prefs;
  /// Graphs and maps computed before, keyed by the data's content hash (instant reopen).
  ArtefactCache m_cache{ArtefactCache::defaultFolder(), ArtefactCache::kDefaultMaxBytes};
  MapView* m_map;
  LegendPanel* m_legend;
  HoverCard* m_hoverCard;
  QWidget* m_rangeFilter = nullptr; ///< the numeric colouring's "show from … to …"
  QDoubleSpinBox* m_rangeFrom = nullptr;
  QDoubleSpinBox* m_rangeTo = nullptr;
  Thumbnailer* m_thumbnailer;
  JobRunner* m_jobs;
  JobRunner* m_pipelineJobs;
  JobRunner* m_trustJobs; ///< map trust: its exact neighbours, beside the other jobs
  // Work on whole metadata columns, off the GUI thread (millions of items take seconds); each
  // its own runner, so that a new request stops only the one it replaces.
  JobRunner* m_searchJobs;
  JobRunner* m_colourJobs;
  JobRunner* m_opacityJobs;
  JobRunner* m_sizeJobs;
  /// Map trust of the 2D and 3D maps, and the map each was computed for (its positions' buffer).
  struct Trust {
    const float* map = nullptr;
    std::vector<double> values;
    double mean = 0;
  };
  std::array<Trust, 2> m_trust;
  /// Outlier scores, and the exploration (graph, metric) they were computed for.
  struct Outliers {
    const void* explore = nullptr;
    std::vector<double> values;
  } m_outliers;
  /// A colouring being read or computed in the background (a metadata column, map trust,
  /// outlier scores), shown when it arrives unless another was chosen meanwhile; and what waits
  /// for it: a range to show, legend groups to hide (a session's).
  QString m_colourPending;
  std::optional<std::pair<double, double>> m_rangePending;
  QStringList m_hiddenPending;
  /// Shows `scheme` (its legend or colour bar), then what waited for it.
  void showScheme(std::unique_ptr<ColourScheme> scheme);
  bool m_opacityPending = false, m_sizePending = false;
  QComboBox* m_opacityBox = nullptr;
  QComboBox* m_sizeBox = nullptr;
  QString m_sizeColumn;                    ///< the column point sizes follow ("" for none)
  std::vector<std::uint8_t> m_sizeClasses; ///< its items' size classes (MapView), empty for none
  QString m_opacityColumn;                 ///< the column opacity follows ("" for none)
  std::vector<double> m_opacityValues;     ///< its values (n), empty for none
  ItemStrip* m_neighbours;
  ItemStrip* m_pathStrip;
  SweepPanel* m_sweep;
  QDockWidget* m_sweepDock = nullptr;
  TradeoffStudio* m_studio = nullptr;
  DuplicatesPanel* m_duplicates;
  QDockWidget* m_duplicatesDock = nullptr;
  OutliersPanel* m_outlierPanel;
  QDockWidget* m_outliersDock = nullptr;
  ComparePanel* m_compare;
  QDockWidget* m_compareDock = nullptr;
  /// Computed colour-by columns from panels (a comparison's overlap), by name; per data set.
  std::map<QString, std::vector<double>> m_panelColumns;
  std::shared_ptr<const Exploration> m_explore;
  std::int64_t m_selected = -1;
  bool m_selectionWaitsForGraph = false; ///< selected before the graph existed
  GraphPath m_lastPath;
  QLabel* m_summary;
  QProgressBar* m_progress;
  QToolButton* m_cancel;
  QToolButton* m_warningButton; ///< shown while the data read has warnings; a click lists them
  QString m_warningText;        ///< those warnings, one a line
  /// Shows what opening noticed (Dataset::warnings) in the status bar and behind its sign.
  void showWarnings(const std::vector<std::string>& warnings);
  QMenu* m_examples = nullptr;
  std::shared_ptr<const Dataset> m_dataset;
  std::vector<float> m_pca; ///< n × 3 PCA coordinates
  int m_mapDim = 2;
  std::array<std::vector<float>, 2> m_layouts; ///< refined 2D and 3D maps (empty: not yet)
  QAction* m_map3D = nullptr;
  std::array<QAction*, 3> m_densityActions{}; ///< by MapView::DensityMode
  QAction* m_openFile = nullptr;
  QStackedWidget* m_central = nullptr;
  QSplitter* m_maps = nullptr;     ///< the map, and the second map beside it
  MapView* m_otherMap = nullptr;   ///< the compared embedding's map
  QAction* m_sideBySide = nullptr; ///< View → Maps Side by Side
  struct Overlay {
    std::int64_t selected = -1;
    std::vector<std::int32_t> neighbours, path, far;
  } m_overlay; ///< what both maps show
  WelcomePage* m_welcome = nullptr;
  // Colouring and search.
  QComboBox* m_colourBox = nullptr;
  QLineEdit* m_searchField = nullptr;
  QCheckBox* m_regexBox = nullptr;
  QLabel* m_matchLabel = nullptr;
  QToolButton* m_searchStop = nullptr; ///< stops the search under way (enabled while one runs)
  ColorBar* m_colorBar = nullptr;
  QDockWidget* m_legendDock = nullptr;
  std::unique_ptr<ColourScheme> m_scheme;
  std::vector<std::int64_t> m_matches;
  std::vector<std::int64_t> m_selection;
  QStringList m_numericColumns;   ///< of those, the numeric ones (opacity can follow them)
  QStringList m_columnChoices;    ///< metadata columns worth colouring by (refreshColourChoices)
  QString m_dataPath, m_metaPath; ///< what is open (a session names them)
  QString m_sessionPath;
  std::optional<Session> m_pendingSession; ///< being applied while its data opens
  /// The parts of a session that need the data (false: it is for other data).
  bool applySessionToData();
  /// The parts that need the graph.
  void applyPendingSession();
  QLabel* m_selectionSummary = nullptr;
  QDockWidget* m_selectionDock = nullptr;
  ItemStrip* m_selectionList = nullptr;
  std::array<QAction*, 3> m_toolActions{};
  void buildSelectionDock();
  void onSelectionDrawn(const QPolygonF& polygon, Qt::KeyboardModifiers modifiers);
  void refreshSelectionPanel();
  bool m_searching = false;      ///< m_matches are a search's (false: no search)
  bool m_searchPending = false;  ///< a search runs in the background
  bool m_goToFirstMatch = false; ///< Enter was pressed while it runs
  QString m_searchText;          ///< the search asked for last, and whether it is a regex
  bool m_searchRegex = false;
  /// The neighbours listed now (for export).
  std::int64_t m_shownNeighboursOf = -1;
  std::vector<std::int32_t> m_shownNeighbours;
  std::vector<float> m_shownDistances;
  void buildExploreBar();
  void refreshColourChoices();
  /// Paints the scheme's colours, bright for the selection (else the search's matches) and
  /// faded for the rest, and hides what the legend hides.
  void recolour();
  /// Fills the legend (categories) or the colour bar (numbers) for a new scheme, then recolours.
  void showSchemeKey();
  bool runExport(const QString& what, const std::function<void()>& write);
  Metric m_metric = Metric::L2;       ///< of the open data set
  Metric m_chosenMetric = Metric::L2; ///< for files that declare none
  bool m_metricForced = false;        ///< --metric: over the file's too
  QString m_metricSource;             ///< why m_metric: "the file's", "chosen", "default"
  std::map<Metric, QAction*> m_metricActions;
  void updateMetricMenu();
  QString m_lastError;
  QString m_backendText;
};

} // namespace nearscape::ui

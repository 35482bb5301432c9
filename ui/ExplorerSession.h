#pragma once
// What a person is exploring, in one model object (ParaView's pqActiveObjects): the data set and
// its files, the metric, the exploration's artefacts (graph, maps, forest), the selection, the
// colouring and its filter, the search and the path. Every change emits its own signal once;
// panels observe them, and the window only assembles. Edits a person may take back (selection,
// colouring, filter) go through the undo stack; loading other data clears it.

#include "ColourScale.h"
#include "nearscape/Nearscape.h"
#include "nearscape/core/Facets.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QUndoStack;

namespace nearscape::ui {

/// The exploration's artefacts for one data set and metric (ExplorationJobs computes them).
struct Artefacts {
  std::shared_ptr<const Dataset> dataset;         ///< what they were computed for
  Metric metric = Metric::L2;                     ///< of the graph, the neighbours and the paths
  KnnResult graph;                                ///< kNN graph, k = graphK (exact or NN-Descent)
  int graphK = 0;                                 ///< the preferred k, or n − 1 for smaller data
  std::string graphKey;                           ///< how the graph was built (the cache's key)
  bool graphCached = false, layoutCached = false; ///< read back from the artefact cache
  GraphMethod method = GraphMethod::Exact;        ///< the preferred method, resolved
  std::string graphMethod;                        ///< how the graph was built
  std::shared_ptr<ExactKnnIndex> index;           ///< exact neighbours of a clicked item
  // The symmetrised graph is not kept: the forest answers paths and counts the components
  // (its trees), and at 10M items the graph would hold gigabytes.
  std::shared_ptr<SpanningForest> forest;
  std::vector<float> layout; ///< the refined map, n × layoutDim (moved out once shown)
  int layoutDim = 2;
  double graphSeconds = 0, layoutSeconds = 0, mstSeconds = 0;
};

/// What hides items of the colouring shown: legend groups unticked (by name), or a numeric
/// colouring's range (items outside, or without a value, hidden).
struct Filter {
  QStringList hidden;
  std::optional<std::pair<double, double>> range;
  bool operator==(const Filter&) const = default;
};

/// A data set as opened, before it replaces the model's (File → Open is transactional: the new
/// data is read whole first, and a failure leaves everything as it was).
struct OpenedData {
  std::shared_ptr<const Dataset> dataset;
  QString dataPath, metaPath;
  std::vector<float> pca;          ///< n × 3 PCA coordinates (zeros past the data's dimension)
  QStringList colourable, numeric; ///< its metadata columns worth colouring by; the numeric ones
  Metric metric = Metric::L2;      ///< the metric it is explored with
  QString metricSource;            ///< why: "the file's", "chosen", "default"
  double seconds = 0;
};

class ExplorerSession : public QObject {
  Q_OBJECT
public:
  explicit ExplorerSession(QObject* parent = nullptr);
  ~ExplorerSession() override;

  // The data set and its files.
  const std::shared_ptr<const Dataset>& dataset() const { return m_dataset; }
  QString dataPath() const { return m_dataPath; }
  QString metaPath() const { return m_metaPath; }
  /// The session file opened (empty: none) and the file compared with (empty: none).
  QString sessionPath() const { return m_sessionPath; }
  void setSessionPath(const QString& path) { m_sessionPath = path; }
  QString comparedPath() const { return m_comparedPath; }
  void setComparedPath(const QString& path) { m_comparedPath = path; }
  /// The files read, which no output may replace: the data (and the sidecar beside it), its
  /// metadata, the session opened and the file compared with. Every file the GUI writes (the
  /// window's exports, the panels', sessions) is refused when it names one.
  QStringList inputFiles() const;
  /// The metadata columns worth colouring by, and the numeric ones.
  const QStringList& colourableColumns() const { return m_colourable; }
  const QStringList& numericColumns() const { return m_numeric; }
  /// The n × 3 PCA coordinates of the data.
  const std::vector<float>& pca() const { return m_pca; }
  /// The PCA view in `dim` dimensions (n × dim).
  std::vector<float> pcaView(int dim) const;
  /// Replaces the data set and everything about the old one (artefacts, maps, selection, path,
  /// colouring back to "label", filter, undo history) and takes its metric; dataChanged, then
  /// metricChanged when the metric differs. The search text stays.
  void setData(OpenedData opened);
  /// The same data with other metadata (File → Attach Metadata): the colouring goes back to
  /// "label" and the undo history goes (it names the old columns); metadataChanged.
  void setMetadata(std::shared_ptr<const Dataset> dataset, QString metaPath, QStringList colourable,
                   QStringList numeric);

  /// The metadata column that names items beside `#id` (core/TitleColumn: picked when data or
  /// metadata arrives, else chosen), and why; column −1: none.
  const TitleChoice& titleColumn() const { return m_title; }
  /// Its name, or empty for none.
  QString titleColumnName() const;
  /// Chooses the title column by name (case-insensitive; empty: none, items go by `#id`);
  /// titleColumnChanged. False (nothing changes) for a column the metadata lacks.
  bool setTitleColumn(const QString& name);

  // The metric, and why it is the one ("the file's", "chosen", "default").
  Metric metric() const { return m_metric; }
  QString metricSource() const { return m_metricSource; }
  void setMetric(Metric metric, const QString& source);

  // The exploration's artefacts (null until computed) and the refined maps.
  const std::shared_ptr<const Artefacts>& artefacts() const { return m_artefacts; }
  void setArtefacts(std::shared_ptr<const Artefacts> artefacts);
  /// Drops the artefacts, the maps, the selected item and the path (a new metric, k or method).
  void clearArtefacts();
  int mapDim() const { return m_mapDim; }
  void setMapDim(int dim);
  /// The refined map of `dim` dimensions (empty: not yet).
  const std::vector<float>& layout(int dim) const { return m_layouts[std::size_t(dim == 3)]; }
  bool mapRefined(int dim) const { return !layout(dim).empty(); }
  void setLayout(int dim, std::vector<float> positions);

  // The selection (sorted ids, unique, within the data) and the selected item with its path.
  const std::vector<std::int64_t>& selection() const { return m_selection; }
  /// Sets the selection, normalised (sorted, unique, ids outside the data dropped); no undo.
  void setSelection(std::vector<std::int64_t> items);
  /// The same as an undoable edit (Edit → Undo takes it back).
  void editSelection(std::vector<std::int64_t> items);
  std::int64_t selectedItem() const { return m_selected; }
  void setSelectedItem(std::int64_t item);
  const GraphPath& path() const { return m_path; }
  void setPath(GraphPath path);

  // The colouring asked for (shown, or being read or computed), and its filter.
  QString colouring() const { return m_colouring; }
  void setColouring(const QString& name);
  /// An undoable change of colouring; the filter starts empty with it (and comes back on undo).
  void editColouring(const QString& name);
  /// The scale of a numeric colouring (Auto: chosen by the values' skew); it stays when the
  /// colouring changes, and goes back to Auto with other data.
  ColourScaleKind colourScale() const { return m_colourScale; }
  void setColourScale(ColourScaleKind kind);
  /// The same as an undoable edit.
  void editColourScale(ColourScaleKind kind);
  const Filter& filter() const { return m_filter; }
  void setFilter(Filter filter);
  void editFilter(Filter filter);

  /// The brushes on the Facets dock (a range or values per column, all must hold): items outside
  /// them are dimmed on the map, not hidden. Other data or metadata clears them.
  const std::vector<FacetBrush>& facets() const { return m_facets; }
  void setFacets(std::vector<FacetBrush> brushes);
  /// The same as an undoable edit.
  void editFacets(std::vector<FacetBrush> brushes);
  /// Per item, 1 where it passes every brush (empty: no brush, or not yet counted). The Facets
  /// dock computes it, as it holds the columns read.
  const std::vector<std::uint8_t>& facetMask() const { return m_facetMask; }
  void setFacetMask(std::vector<std::uint8_t> mask);

  // The search asked for, and its matches once it ends (searching: matches are a search's).
  QString searchText() const { return m_searchText; }
  bool searchRegex() const { return m_searchRegex; }
  void setSearch(const QString& text, bool regex);
  const std::vector<std::int64_t>& matches() const { return m_matches; }
  bool searching() const { return m_searching; }
  void setMatches(std::vector<std::int64_t> matches, bool searching);

  /// Undo and redo of selection, colouring, filter and facet edits.
  QUndoStack* undoStack() const { return m_undo; }

signals:
  void dataChanged();
  void metadataChanged();
  void titleColumnChanged();
  void metricChanged(Metric metric);
  void artefactsChanged();
  void mapDimChanged(int dim);
  void layoutChanged(int dim);
  void selectionChanged();
  void selectedItemChanged(std::int64_t item);
  void pathChanged();
  void colouringChanged(const QString& name);
  void colourScaleChanged(ColourScaleKind kind);
  void filterChanged();
  void facetsChanged();
  void facetMaskChanged();
  void searchChanged();
  void matchesChanged();

private:
  std::shared_ptr<const Dataset> m_dataset;
  QString m_dataPath, m_metaPath, m_sessionPath, m_comparedPath;
  QStringList m_colourable, m_numeric;
  TitleChoice m_title;
  std::vector<float> m_pca;
  Metric m_metric = Metric::L2;
  QString m_metricSource;
  std::shared_ptr<const Artefacts> m_artefacts;
  int m_mapDim = 2;
  std::array<std::vector<float>, 2> m_layouts;
  std::vector<std::int64_t> m_selection;
  std::int64_t m_selected = -1;
  GraphPath m_path;
  QString m_colouring = QStringLiteral("label");
  ColourScaleKind m_colourScale = ColourScaleKind::Auto;
  Filter m_filter;
  std::vector<FacetBrush> m_facets;
  std::vector<std::uint8_t> m_facetMask;
  QString m_searchText;
  bool m_searchRegex = false;
  std::vector<std::int64_t> m_matches;
  bool m_searching = false;
  QUndoStack* m_undo;
};

} // namespace nearscape::ui

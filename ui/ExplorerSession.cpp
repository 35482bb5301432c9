#include "ExplorerSession.h"

#include "Export.h"

#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>

namespace nearscape::ui {
namespace {

/// Undo commands apply the model's setters: the panels follow through its signals.
class SelectionCommand : public QUndoCommand {
public:
  SelectionCommand(ExplorerSession& session, std::vector<std::int64_t> before,
                   std::vector<std::int64_t> after)
      : QUndoCommand(QObject::tr("Selection")), m_session(session), m_before(std::move(before)),
        m_after(std::move(after)) {}
  void redo() override { m_session.setSelection(m_after); }
  void undo() override { m_session.setSelection(m_before); }

private:
  ExplorerSession& m_session;
  std::vector<std::int64_t> m_before, m_after;
};

class ColouringCommand : public QUndoCommand {
public:
  ColouringCommand(ExplorerSession& session, QString before, Filter filterBefore, QString after)
      : QUndoCommand(QObject::tr("Colour by %1").arg(after)), m_session(session),
        m_before(std::move(before)), m_filterBefore(std::move(filterBefore)),
        m_after(std::move(after)) {}
  // The filter first: the colouring's arrival applies it (a hidden group needs its scheme).
  void redo() override {
    m_session.setFilter({});
    m_session.setColouring(m_after);
  }
  void undo() override {
    m_session.setFilter(m_filterBefore);
    m_session.setColouring(m_before);
  }

private:
  ExplorerSession& m_session;
  QString m_before;
  Filter m_filterBefore;
  QString m_after;
};

class ColourScaleCommand : public QUndoCommand {
public:
  ColourScaleCommand(ExplorerSession& session, ColourScaleKind before, ColourScaleKind after)
      : QUndoCommand(QObject::tr("Colour scale %1").arg(colourScaleName(after).data())),
        m_session(session), m_before(before), m_after(after) {}
  void redo() override { m_session.setColourScale(m_after); }
  void undo() override { m_session.setColourScale(m_before); }

private:
  ExplorerSession& m_session;
  ColourScaleKind m_before, m_after;
};

class FilterCommand : public QUndoCommand {
public:
  FilterCommand(ExplorerSession& session, Filter before, Filter after)
      : QUndoCommand(QObject::tr("Filter")), m_session(session), m_before(std::move(before)),
        m_after(std::move(after)) {}
  void redo() override { m_session.setFilter(m_after); }
  void undo() override { m_session.setFilter(m_before); }

private:
  ExplorerSession& m_session;
  Filter m_before, m_after;
};

class FacetsCommand : public QUndoCommand {
public:
  FacetsCommand(ExplorerSession& session, std::vector<FacetBrush> before,
                std::vector<FacetBrush> after)
      : QUndoCommand(QObject::tr("Facet filter")), m_session(session), m_before(std::move(before)),
        m_after(std::move(after)) {}
  void redo() override { m_session.setFacets(m_after); }
  void undo() override { m_session.setFacets(m_before); }

private:
  ExplorerSession& m_session;
  std::vector<FacetBrush> m_before, m_after;
};

/// Sorted, unique, within [0, n).
std::vector<std::int64_t> normalised(std::vector<std::int64_t> items, std::int64_t n) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  items.erase(
      std::remove_if(items.begin(), items.end(), [n](std::int64_t i) { return i < 0 || i >= n; }),
      items.end());
  return items;
}

} // namespace

ExplorerSession::ExplorerSession(QObject* parent) : QObject(parent), m_undo(new QUndoStack(this)) {}

ExplorerSession::~ExplorerSession() = default;

QStringList ExplorerSession::inputFiles() const {
  QStringList inputs = inputsOf(m_dataPath);
  for (const QString& file : {m_metaPath, m_sessionPath, m_comparedPath})
    if (!file.isEmpty())
      inputs << file;
  return inputs;
}

std::vector<float> ExplorerSession::pcaView(int dim) const {
  const std::size_t n = m_pca.size() / 3;
  std::vector<float> view(n * std::size_t(dim));
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      view[i * std::size_t(dim) + std::size_t(c)] = m_pca[3 * i + std::size_t(c)];
  return view;
}

void ExplorerSession::setData(OpenedData opened) {
  // Ids of the old data mean nothing in the new: its history goes with it.
  m_undo->clear();
  m_dataset = std::move(opened.dataset);
  m_dataPath = std::move(opened.dataPath);
  m_metaPath = std::move(opened.metaPath);
  m_pca = std::move(opened.pca);
  m_colourable = std::move(opened.colourable);
  m_numeric = std::move(opened.numeric);
  m_artefacts.reset();
  m_layouts = {};
  m_selection.clear();
  m_selected = -1;
  m_path = {};
  m_colouring = QStringLiteral("label");
  m_colourScale = ColourScaleKind::Auto;
  m_filter = {};
  m_facets.clear();
  m_facetMask.clear();
  m_matches.clear();
  m_searching = false;
  m_comparedPath.clear(); // a comparison is of the old data
  m_sessionPath.clear();  // the window names the session this data came with, if any
  m_title = pickTitleColumn(*m_dataset);
  const bool otherMetric = opened.metric != m_metric;
  m_metric = opened.metric;
  m_metricSource = opened.metricSource;
  emit dataChanged();
  emit titleColumnChanged();
  if (otherMetric)
    emit metricChanged(m_metric);
}

void ExplorerSession::setMetadata(std::shared_ptr<const Dataset> dataset, QString metaPath,
                                  QStringList colourable, QStringList numeric) {
  m_dataset = std::move(dataset);
  m_metaPath = std::move(metaPath);
  m_colourable = std::move(colourable);
  m_numeric = std::move(numeric);
  // A colouring or filter of the old metadata may name columns and values that are gone.
  m_undo->clear();
  m_colouring = QStringLiteral("label");
  m_filter = {};
  m_title = pickTitleColumn(*m_dataset);
  m_facets.clear();
  m_facetMask.clear();
  emit metadataChanged();
  emit titleColumnChanged();
}

QString ExplorerSession::titleColumnName() const {
  if (!m_dataset || m_title.column < 0)
    return {};
  return QString::fromStdString(m_dataset->metadata.columnNames[std::size_t(m_title.column)]);
}

bool ExplorerSession::setTitleColumn(const QString& name) {
  if (!m_dataset)
    return false;
  TitleChoice choice;
  if (!name.isEmpty()) {
    choice.column = m_dataset->metadata.findColumn(name.toStdString());
    if (choice.column < 0)
      return false;
    choice.reason = TitleReason::Chosen;
  }
  if (choice.column == m_title.column) {
    m_title = choice.column < 0 ? TitleChoice{} : TitleChoice{choice.column, m_title.reason};
    return true;
  }
  m_title = choice;
  emit titleColumnChanged();
  return true;
}

void ExplorerSession::setMetric(Metric metric, const QString& source) {
  m_metricSource = source;
  if (metric == m_metric)
    return;
  m_metric = metric;
  emit metricChanged(metric);
}

void ExplorerSession::setArtefacts(std::shared_ptr<const Artefacts> artefacts) {
  if (artefacts == m_artefacts)
    return;
  m_artefacts = std::move(artefacts);
  emit artefactsChanged();
}

void ExplorerSession::clearArtefacts() {
  m_layouts = {};
  setArtefacts(nullptr);
  setPath({});
  setSelectedItem(-1);
}

void ExplorerSession::setMapDim(int dim) {
  dim = dim == 3 ? 3 : 2;
  if (dim == m_mapDim)
    return;
  m_mapDim = dim;
  emit mapDimChanged(dim);
}

void ExplorerSession::setLayout(int dim, std::vector<float> positions) {
  m_layouts[std::size_t(dim == 3)] = std::move(positions);
  emit layoutChanged(dim);
}

void ExplorerSession::setSelection(std::vector<std::int64_t> items) {
  items = normalised(std::move(items), m_dataset ? m_dataset->size() : 0);
  if (items == m_selection)
    return;
  m_selection = std::move(items);
  emit selectionChanged();
}

void ExplorerSession::editSelection(std::vector<std::int64_t> items) {
  items = normalised(std::move(items), m_dataset ? m_dataset->size() : 0);
  if (items == m_selection)
    return;
  m_undo->push(new SelectionCommand(*this, m_selection, std::move(items)));
}

void ExplorerSession::setSelectedItem(std::int64_t item) {
  if (item == m_selected)
    return;
  m_selected = item;
  emit selectedItemChanged(item);
}

void ExplorerSession::setPath(GraphPath path) {
  if (path.nodes.empty() && m_path.nodes.empty())
    return;
  m_path = std::move(path);
  emit pathChanged();
}

void ExplorerSession::setColouring(const QString& name) {
  if (name == m_colouring)
    return;
  m_colouring = name;
  emit colouringChanged(name);
}

void ExplorerSession::editColouring(const QString& name) {
  if (name == m_colouring)
    return;
  m_undo->push(new ColouringCommand(*this, m_colouring, m_filter, name));
}

void ExplorerSession::setColourScale(ColourScaleKind kind) {
  if (kind == m_colourScale)
    return;
  m_colourScale = kind;
  emit colourScaleChanged(kind);
}

void ExplorerSession::editColourScale(ColourScaleKind kind) {
  if (kind == m_colourScale)
    return;
  m_undo->push(new ColourScaleCommand(*this, m_colourScale, kind));
}

void ExplorerSession::setFilter(Filter filter) {
  if (filter == m_filter)
    return;
  m_filter = std::move(filter);
  emit filterChanged();
}

void ExplorerSession::editFilter(Filter filter) {
  if (filter == m_filter)
    return;
  m_undo->push(new FilterCommand(*this, m_filter, std::move(filter)));
}

void ExplorerSession::setFacets(std::vector<FacetBrush> brushes) {
  if (brushes == m_facets)
    return;
  m_facets = std::move(brushes);
  emit facetsChanged();
}

void ExplorerSession::editFacets(std::vector<FacetBrush> brushes) {
  if (brushes == m_facets)
    return;
  m_undo->push(new FacetsCommand(*this, m_facets, std::move(brushes)));
}

void ExplorerSession::setFacetMask(std::vector<std::uint8_t> mask) {
  if (mask == m_facetMask)
    return;
  m_facetMask = std::move(mask);
  emit facetMaskChanged();
}

void ExplorerSession::setSearch(const QString& text, bool regex) {
  if (text == m_searchText && regex == m_searchRegex)
    return;
  m_searchText = text;
  m_searchRegex = regex;
  emit searchChanged();
}

void ExplorerSession::setMatches(std::vector<std::int64_t> matches, bool searching) {
  m_matches = std::move(matches);
  m_searching = searching;
  emit matchesChanged();
}

} // namespace nearscape::ui

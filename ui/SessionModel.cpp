// A session to and from the explorer's model (ui/Session.h's of, restoreInto): apart from
// Session.cpp, whose reading and writing the fuzz target builds without the model.
#include "ExplorerSession.h"
#include "Session.h"

#include "nearscape/core/Metric.h"

namespace nearscape::ui {

Session Session::of(const ExplorerSession& model) {
  Session s;
  s.data = model.dataPath();
  s.metadata = model.metaPath();
  if (model.dataset())
    s.contentHash = model.dataset()->contentHash;
  s.metric = std::string(metricName(model.metric()));
  s.colourBy = model.colouring();
  s.colourScale = model.colourScale();
  s.searchText = model.searchText();
  s.searchRegex = model.searchRegex();
  s.hidden = model.filter().hidden;
  s.shownRange = model.filter().range;
  s.facets = model.facets();
  s.selection = model.selection();
  s.selected = model.selectedItem();
  s.pathTo = model.path().found() ? model.path().nodes.back() : -1;
  s.dim = model.mapDim();
  if (model.dataset())
    s.titleColumn = model.titleColumnName();
  return s;
}

bool Session::restoreColouring(ExplorerSession& model, const QStringList& colourings) const {
  if (colourBy.isEmpty() || !colourings.contains(colourBy))
    return false;
  // The filter first: the colouring's arrival shows it (a column read in the background).
  model.setFilter({hidden, shownRange});
  model.setColourScale(colourScale);
  model.setColouring(colourBy);
  return true;
}

bool Session::restoreInto(ExplorerSession& model, const QStringList& colourings) const {
  const bool coloured = restoreColouring(model, colourings);
  // A column the metadata lacks now (it changed since) leaves the one picked on its own.
  if (titleColumn)
    model.setTitleColumn(*titleColumn);
  // An empty search is a state too: it ends the search the window had before.
  model.setSearch(searchText, searchRegex);
  model.setFacets(facets);
  model.setSelection(selection);
  // Item 0 is an item like any other: only −1 (or an id the data lacks) means none.
  const std::int64_t n = model.dataset() ? model.dataset()->size() : 0;
  model.setSelectedItem(selected >= 0 && selected < n ? selected : -1);
  return coloured;
}

std::int64_t Session::restorablePathEnd(const ExplorerSession& model) const {
  const std::int64_t n = model.dataset() ? model.dataset()->size() : 0;
  return model.selectedItem() >= 0 && pathTo >= 0 && pathTo < n ? pathTo : -1;
}

} // namespace nearscape::ui

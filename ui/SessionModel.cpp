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
  if (!searchText.isEmpty())
    model.setSearch(searchText, searchRegex);
  model.setFacets(facets);
  model.setSelection(selection);
  return coloured;
}

} // namespace nearscape::ui

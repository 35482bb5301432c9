#pragma once
// The selected item: its exact nearest neighbours (listed, ringed on the map, those the map
// places far marked and linked), the smoothest (min-max) path from it to another item, and the
// true neighbours an index setting missed (the sweep panel's). The selected item and the path
// are the model's (ExplorerSession).

#include <QObject>
#include <QString>

#include <cstdint>
#include <vector>

class QWidget;

namespace nearscape::ui {

class ExplorerSession;
class ItemStrip;
class JobRunner;
class MapPair;

class ItemInspector : public QObject {
  Q_OBJECT
public:
  /// `neighbours` and `path` are the strips it fills; `dialogParent` carries the offer to join
  /// components.
  ItemInspector(ExplorerSession* session, MapPair* maps, ItemStrip* neighbours, ItemStrip* path,
                JobRunner* jobs, QWidget* dialogParent);

  /// How many neighbours are listed (Edit → Preferences).
  void setShownNeighbours(int count) { m_shown = count; }
  /// The map rank beyond which a listed neighbour is "far in map" (layout/FarInMap.h), for the
  /// map last inspected; -1 before any refined map was.
  std::int64_t farRankLimit() const { return m_farLimit.limit; }
  /// Selects `item`: marks it and lists its exact nearest neighbours (once the graph exists).
  void selectItem(std::int64_t item);
  /// Shows the min-max path from the selected item to `item`; when they lie in different
  /// components, offers to join them (bridgeAsked).
  void showPathTo(std::int64_t item);
  /// Lists and rings the true neighbours of `query` that the sweep setting `setting` missed.
  void showMissed(std::int64_t query, const std::vector<std::int32_t>& missed,
                  const QString& setting);
  /// Drops the neighbours and the path shown (the artefacts they came from are gone).
  void clear();

  /// The neighbours listed now (for export): of which item, their ids and distances.
  std::int64_t shownNeighboursOf() const { return m_shownOf; }
  const std::vector<std::int32_t>& shownNeighbours() const { return m_shownIds; }
  const std::vector<float>& shownDistances() const { return m_shownDistances; }

signals:
  void message(const QString& text, int msecs);
  /// The person agreed to join the graph's components, then see the path to `retryTo`.
  void bridgeAsked(std::int64_t retryTo);
  /// A path was asked for between two components; the offer to join them is on screen.
  void componentsDisconnected(std::int64_t from, std::int64_t to, int components);

private:
  /// Of `neighbours` (true neighbours of `item`), those the refined map shown places beyond its
  /// far-in-map rank limit (layout/FarInMap.h: the map's worst-kept fifth of neighbour links;
  /// none before the map is refined).
  std::vector<std::int32_t> farInMap(std::int64_t item,
                                     const std::vector<std::int32_t>& neighbours) const;

  ExplorerSession* m_session;
  MapPair* m_maps;
  ItemStrip* m_neighbours;
  ItemStrip* m_pathStrip;
  JobRunner* m_jobs;
  QWidget* m_dialogParent;
  int m_shown = 10;
  bool m_waitsForGraph = false; ///< selected before the graph existed
  std::int64_t m_shownOf = -1;
  std::vector<std::int32_t> m_shownIds;
  std::vector<float> m_shownDistances;
  /// The far-in-map rank limit of the map it was computed for (its coordinates' address and size).
  struct FarLimit {
    const float* map = nullptr;
    std::size_t size = 0;
    std::int64_t limit = -1;
  };
  mutable FarLimit m_farLimit;
};

} // namespace nearscape::ui

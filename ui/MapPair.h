#pragma once
// The map in the middle, and the compared embedding's map beside it (File → Compare With…):
// the same items, coloured, filtered and overlaid alike; hovering one rings the item on the
// other.

#include "MapView.h"

#include <QSplitter>

#include <cstdint>
#include <vector>

namespace nearscape::ui {

class MapPair : public QSplitter {
  Q_OBJECT
public:
  explicit MapPair(QWidget* parent = nullptr);

  MapView* map() const { return m_map; }
  /// The second embedding's map (hidden until a comparison made one).
  MapView* otherMap() const { return m_other; }

  /// The overlay (selected item, rings, path, far links) on the map, and on the second map when
  /// it is shown (far links are the first map's: where that map tears).
  void setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                  const std::vector<std::int32_t>& path, const std::vector<std::int32_t>& far = {});
  /// Colours (n × 3) and the visible mask (empty: all) of both maps.
  void setColors(const std::vector<std::uint8_t>& rgb);
  void setVisibleMask(std::vector<bool> visible);
  /// Puts `positions` (n × 2, the compared embedding's map) on the second map, in grey.
  void setOtherPoints(const std::vector<float>& positions);
  /// Shows or hides the second map beside the first and refits both cameras (unless the person
  /// moved the first one).
  void showOther(bool on);

private:
  void linkHover(const MapView* from, std::int64_t item);

  MapView* m_map;
  MapView* m_other;
  struct Overlay {
    std::int64_t selected = -1;
    std::vector<std::int32_t> neighbours, path, far;
  } m_overlay; ///< what both maps show
};

} // namespace nearscape::ui

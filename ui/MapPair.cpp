#include "MapPair.h"

#include <QTimer>

namespace nearscape::ui {

MapPair::MapPair(QWidget* parent)
    : QSplitter(Qt::Horizontal, parent), m_map(new MapView(this)), m_other(new MapView(this)) {
  m_other->setObjectName(QStringLiteral("otherMap"));
  addWidget(m_map);
  addWidget(m_other);
  m_other->hide();
  connect(m_map, &MapView::hovered, this,
          [this](std::int64_t item, const QPoint&) { linkHover(m_map, item); });
  connect(m_other, &MapView::hovered, this,
          [this](std::int64_t item, const QPoint&) { linkHover(m_other, item); });
}

void MapPair::setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                         const std::vector<std::int32_t>& path,
                         const std::vector<std::int32_t>& far) {
  m_overlay = {selected, neighbours, path, far};
  m_map->setOverlay(selected, neighbours, path, far);
  if (m_other->isVisible())
    m_other->setOverlay(selected, neighbours, path);
}

void MapPair::linkHover(const MapView* from, std::int64_t item) {
  if (!m_other->isVisible())
    return;
  // The hovered item ringed on the other map (as if selected there), until the mouse leaves it.
  MapView* to = from == m_map ? m_other : m_map;
  const Overlay& o = m_overlay;
  to->setOverlay(item >= 0 ? item : o.selected, o.neighbours, o.path,
                 to == m_map && item < 0 ? o.far : std::vector<std::int32_t>{});
}

void MapPair::setColors(const std::vector<std::uint8_t>& rgb) {
  m_map->setColors(rgb);
  if (m_other->pointCount() == m_map->pointCount())
    m_other->setColors(rgb);
}

void MapPair::setVisibleMask(std::vector<bool> visible) {
  if (m_other->pointCount() == m_map->pointCount())
    m_other->setVisibleMask(visible);
  m_map->setVisibleMask(std::move(visible));
}

void MapPair::setOtherPoints(const std::vector<float>& positions) {
  const std::vector<std::uint8_t> grey(positions.size() / 2 * 3, 160);
  m_other->setPoints(positions, 2, grey);
}

void MapPair::showOther(bool on) {
  m_other->setVisible(on);
  // The map's width changed: refit both once the splitter has laid them out (unless the person
  // moved the camera).
  QTimer::singleShot(0, this, [this] {
    if (!m_map->userMovedCamera())
      m_map->resetCamera();
    if (m_other->isVisible())
      m_other->resetCamera();
  });
  if (on) {
    setSizes({width() / 2, width() - width() / 2});
    setOverlay(m_overlay.selected, m_overlay.neighbours, m_overlay.path, m_overlay.far);
  }
}

} // namespace nearscape::ui

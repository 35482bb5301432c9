#include "ViewExports.h"

#include "ExplorerSession.h"
#include "Export.h"
#include "ItemInspector.h"
#include "MapView.h"

#include <QImage>
#include <QPainter>

#include <algorithm>

namespace nearscape::ui {

ViewExports::ViewExports(const ExplorerSession* session, MapView* map,
                         const ItemInspector* inspector, QObject* parent)
    : QObject(parent), m_session(session), m_map(map), m_inspector(inspector) {}

bool ViewExports::run(const QString& what, const std::function<void()>& write) {
  try {
    write();
    emit written(tr("%1 exported").arg(what), 5000);
    return true;
  } catch (const std::exception& e) {
    emit failed(tr("Export %1").arg(what), QString::fromUtf8(e.what()));
    return false;
  }
}

bool ViewExports::map(const QString& path) {
  const auto& data = m_session->dataset();
  if (!data)
    return false;
  return run(tr("map"), [&] {
    exportMap(path, *data, m_map->positions(), m_map->dim(), m_session->inputFiles());
  });
}

bool ViewExports::neighbours(const QString& path) {
  const auto& data = m_session->dataset();
  if (!data || m_inspector->shownNeighbours().empty())
    return false;
  return run(tr("neighbours"), [&] {
    exportNeighbours(path, *data, m_inspector->shownNeighboursOf(), m_inspector->shownNeighbours(),
                     m_inspector->shownDistances(), m_session->inputFiles());
  });
}

bool ViewExports::path(const QString& path) {
  const auto& data = m_session->dataset();
  if (!data || !m_session->path().found())
    return false;
  return run(tr("path"),
             [&] { exportPath(path, *data, m_session->path(), m_session->inputFiles()); });
}

bool ViewExports::picture(const QString& path) {
  const auto& data = m_session->dataset();
  if (!data)
    return false;
  return run(tr("picture"), [&] {
    QImage image = m_map->grabFramebuffer();
    {
      // The framebuffer holds device pixels; the overlays paint in the map's widget units.
      QPainter painter(&image);
      painter.scale(double(image.width()) / std::max(1, m_map->width()),
                    double(image.height()) / std::max(1, m_map->height()));
      for (const QPointer<QWidget>& overlay : m_overlays)
        if (overlay && overlay->isVisible())
          overlay->render(&painter, overlay->pos(), QRegion(), QWidget::DrawChildren);
    }
    exportPicture(path, *data, image, m_session->inputFiles());
  });
}

void ViewExports::addPictureOverlay(QWidget* overlay) {
  m_overlays.emplace_back(overlay);
}

bool ViewExports::selection(const QString& path) {
  const auto& data = m_session->dataset();
  if (!data || m_session->selection().empty())
    return false;
  return run(tr("selection"), [&] {
    exportSelection(path, *data, m_session->selection(), m_session->inputFiles());
  });
}

} // namespace nearscape::ui

#pragma once
// The map: every item as a point, coloured by label, in a VTK scene hosted by a Qt 6
// QOpenGLWidget (VTK renders into its own framebuffer inside the widget's context; paintGL blits
// that into the widget's framebuffer, as VTK >= 9.2's QVTKOpenGLNativeWidget does).

#include "nearscape/layout/PointGrid.h"

#include <QOpenGLWidget>

#include <cstdint>
#include <memory>
#include <vector>

class vtkActor;
class vtkGenericOpenGLRenderWindow;
class vtkObject;
class vtkPolyData;
class vtkRenderer;

namespace nearscape::ui {

class MapView : public QOpenGLWidget {
  Q_OBJECT
public:
  explicit MapView(QWidget* parent = nullptr);
  ~MapView() override;

  /// Shows n points; `xy` is n × 2 map coordinates, `rgb` n × 3 colours. Resets the camera.
  void setPoints(const std::vector<float>& xy, const std::vector<std::uint8_t>& rgb);
  /// Replaces the colours (n × 3 RGB) and keeps the map as it is.
  void setColors(const std::vector<std::uint8_t>& rgb);
  /// Moves the points to `xy` (n × 2, same n) keeping colours and visibility; `fit` refits the
  /// camera (while the layout refines, until the person pans or zooms).
  void movePoints(const std::vector<float>& xy, bool fit);
  /// Marks `selected` (−1: none) and `neighbours` with larger rings; draws `path` as a polyline.
  void setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                  const std::vector<std::int32_t>& path);
  /// True once the person has panned or zoomed since the last setPoints.
  bool userMovedCamera() const { return m_userMoved; }
  /// Which points are drawn and pickable (n flags); empty = all.
  void setVisibleMask(std::vector<bool> visible);
  /// Fits all points in the view.
  void resetCamera();
  /// Zooms by `factor` (> 1 zooms in) about the widget point `at`.
  void zoomAt(const QPointF& at, double factor);
  /// The item drawn nearest to widget point `pos` (within a few pixels), or -1.
  std::int64_t itemAt(const QPointF& pos) const;
  /// Widget coordinates of item `item`'s point.
  QPointF widgetPosOf(std::int64_t item) const;
  std::int64_t pointCount() const { return std::int64_t(m_xy.size() / 2); }
  /// The current n × 2 map positions.
  const std::vector<float>& positions() const { return m_xy; }
  /// Background colour (what a grab shows where no point is drawn).
  static QColor backgroundColor();
  /// Colour of the selection, neighbour rings and the path.
  static QColor overlayColor();

signals:
  /// The mouse rests on `item` (-1: on no item); `globalPos` is where the mouse is.
  void hovered(std::int64_t item, const QPoint& globalPos);
  /// A click (no drag) on `item` (−1: on empty space), with the keyboard modifiers held.
  void clicked(std::int64_t item, Qt::KeyboardModifiers modifiers);

protected:
  void initializeGL() override;
  void resizeGL(int w, int h) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void leaveEvent(QEvent* event) override;

private:
  void rebuildCells();
  void onRenderWindowEvent(vtkObject* caller, unsigned long eventId, void* callData);
  /// World (map) coordinates of a widget point, through the parallel camera.
  QPointF worldAt(const QPointF& pos) const;
  double worldPerPixel() const;

  vtkGenericOpenGLRenderWindow* m_renderWindow = nullptr;
  vtkRenderer* m_renderer = nullptr;
  vtkPolyData* m_polyData = nullptr;
  vtkActor* m_actor = nullptr;
  vtkPolyData* m_overlayPoints = nullptr;
  vtkActor* m_overlayPointsActor = nullptr;
  vtkPolyData* m_pathLine = nullptr;
  vtkActor* m_pathActor = nullptr;
  std::int64_t m_selected = -1;
  std::vector<std::int32_t> m_neighbours, m_path;
  bool m_userMoved = false;
  QPointF m_pressPos;
  void rebuildOverlay();
  bool m_initialized = false;

  std::vector<float> m_xy;
  std::vector<bool> m_visible;
  PointGrid m_grid;
  QPointF m_dragStart;
  bool m_dragging = false;
};

} // namespace nearscape::ui

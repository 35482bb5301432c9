#pragma once
// The map: every item as a point, coloured by label, in 2D or 3D, in a VTK scene hosted by a Qt 6
// QOpenGLWidget (VTK renders into its own framebuffer inside the widget's context; paintGL blits
// that into the widget's framebuffer, as VTK >= 9.2's QVTKOpenGLNativeWidget does).
// Where points crowd the pixels (hundreds of thousands and more), the map is drawn as a density
// image instead (DensityImage); while the camera moves, a stratified sample stands in for the
// full set (StratifiedSample) until it rests. Picking, hover and selection always use every point.

#include "DensityImage.h"
#include "nearscape/layout/PointGrid.h"

#include <QOpenGLWidget>
#include <QPolygonF>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QTimer;
class vtkActor;
class vtkActor2D;
class vtkGenericOpenGLRenderWindow;
class vtkImageData;
class vtkObject;
class vtkPoints;
class vtkPolyData;
class vtkRenderer;

namespace nearscape::ui {

class MapView : public QOpenGLWidget {
  Q_OBJECT
public:
  explicit MapView(QWidget* parent = nullptr);
  ~MapView() override;

  /// Shows n points; `positions` is n × dim map coordinates (dim 2 or 3), `rgb` n × 3 colours.
  /// Resets the camera (3D: looking down the third axis, as the 2D map would be seen).
  void setPoints(const std::vector<float>& positions, int dim,
                 const std::vector<std::uint8_t>& rgb);
  /// Replaces the colours (n × 3 RGB) and keeps the map as it is.
  void setColors(const std::vector<std::uint8_t>& rgb);
  /// Moves the points to `positions` (n × dim, same n and dim) keeping colours and visibility;
  /// `fit` refits the camera (while the layout refines, until the person moves the camera).
  void movePoints(const std::vector<float>& positions, bool fit);
  /// Shows the same points at `positions` (n × dim, dim 2 or 3: a new map of them), keeping
  /// colours, visibility and the overlay; the camera starts afresh.
  void setPositions(const std::vector<float>& positions, int dim);
  /// Marks `selected` (−1: none) and `neighbours` with larger rings; draws `path` as a polyline
  /// and a faint line from `selected` to each of `farLinks` (true neighbours placed far away).
  void setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                  const std::vector<std::int32_t>& path,
                  const std::vector<std::int32_t>& farLinks = {});
  /// The items linked by faint lines to the selected one.
  const std::vector<std::int32_t>& farLinks() const { return m_farLinks; }
  /// The overlay's marked item (−1: none) and path, as last set.
  std::int64_t overlayItem() const { return m_selected; }
  const std::vector<std::int32_t>& overlayPath() const { return m_path; }
  /// True once the person has panned or zoomed since the last setPoints.
  bool userMovedCamera() const { return m_userMoved; }
  /// Which points are drawn and pickable (n flags); empty = all.
  void setVisibleMask(std::vector<bool> visible);
  /// Which items are drawn (empty: all); visibleMaskChanged follows each change.
  const std::vector<bool>& visibleMask() const { return m_visible; }
  /// Point sizes by class (0–3: kSizeClassPixels), one class per item (empty: every item at the
  /// normal size, class 1). Picking and selection are unaffected.
  void setSizeClasses(std::vector<std::uint8_t> classes);
  static constexpr float kSizeClassPixels[4] = {2.0f, 3.0f, 5.0f, 8.0f};
  /// Fits the points in the view: their central percentiles' box (FitBox), so that a few far
  /// points do not squash the cloud; those left outside are counted in a note on the map until
  /// the camera moves (outsideNote).
  void resetCamera();
  /// Items the last fit left outside the view.
  std::int64_t outsideAfterFit() const { return m_outsideFit; }
  /// Whether the map shows the note on what the fit left out, and its text.
  bool hasOutsideNote() const;
  QString outsideNote() const;
  /// A name drawn in the map's top-left corner (empty: none): the compared maps say whose.
  void setCaption(const QString& caption);
  QString caption() const { return m_caption; }
  /// Where the camera looks from (a session keeps it): focal point, position, view-up, and the
  /// parallel scale (half the view's height in map units).
  struct Camera {
    std::array<double, 3> focal{}, position{}, up{};
    double scale = 1;
  };
  Camera camera() const;
  void setCamera(const Camera& camera);
  /// Pans (keeping the zoom and, in 3D, the orientation) so that `item` is in the centre.
  void centreOn(std::int64_t item);
  /// Zooms by `factor` (> 1 zooms in) about the widget point `at`.
  void zoomAt(const QPointF& at, double factor);
  /// 3D only: turns the scene by `dx`, `dy` pixels' worth of drag about the focal point.
  void rotateBy(double dx, double dy);
  /// The item drawn nearest to widget point `pos` (within a few pixels), or -1. In 3D the
  /// nearest on screen, whatever its depth.
  std::int64_t itemAt(const QPointF& pos) const;
  /// Widget coordinates of item `item`'s point.
  QPointF widgetPosOf(std::int64_t item) const;
  std::int64_t pointCount() const { return m_dim ? std::int64_t(m_positions.size()) / m_dim : 0; }
  /// 2 or 3.
  int dim() const { return m_dim; }
  /// The current n × dim map positions.
  const std::vector<float>& positions() const { return m_positions; }
  /// Background colour (what a grab shows where no point is drawn).
  static QColor backgroundColor();
  /// Colour of the selection, neighbour rings and the path.
  static QColor overlayColor();

  /// How points are drawn: Auto draws the density view where points crowd the pixels (crowding
  /// from kDensityFrom, fully shaded from kDensityFull) and single points as one zooms in; On
  /// always the density view; Off always single points.
  enum class DensityMode { Auto, On, Off };
  void setDensityMode(DensityMode mode);
  DensityMode densityMode() const { return m_densityMode; }
  static constexpr double kDensityFrom = 4.0, kDensityFull = 16.0;
  /// Auto draws single points below this many visible items, however they overlap.
  static constexpr std::int64_t kDensityMinPoints = 20000;
  /// While the camera moves (a drag, the wheel), beyond this many visible items only a
  /// stratified sample of about this many is drawn; kSettleMs after it stops, every item again.
  static constexpr std::int64_t kMovingBudget = 200000;
  static constexpr int kSettleMs = 200;
  /// What the last frame drew.
  struct Frame {
    bool density = false;    ///< the density view (else single points)
    bool sampled = false;    ///< a stratified sample of the visible items (the camera moved)
    std::int64_t points = 0; ///< items drawn or counted into the density view
    /// DensityImage::crowding of the visible items (estimated from the sample while moving);
    /// 0 when it was not measured (Off, or too few items for Auto).
    double crowding = 0;
    double strength = 0; ///< the density view's shading (DensityImage::shade's `density`)
  };
  const Frame& lastFrame() const { return m_frame; }
  /// True while the camera moves (until kSettleMs after the last drag or wheel step).
  bool cameraMoving() const { return m_moving; }

  /// What a left drag does: pan (3D: turn), draw a lasso, or draw a rectangle.
  enum class DragTool { Pan, Lasso, Rectangle };
  void setDragTool(DragTool tool);
  DragTool dragTool() const { return m_tool; }
  /// The visible items inside `polygon` (widget coordinates; in 3D, as seen on screen), sorted.
  std::vector<std::int64_t> itemsInside(const QPolygonF& polygon) const;
  /// A press whose pointer never went this far (Manhattan pixels) from where it began is a
  /// click; anything farther is a drag or a drawn shape, wherever it ends.
  static constexpr qreal kClickTravel = 4;

signals:
  /// A lasso or rectangle was drawn (widget coordinates), with the modifiers held at its end:
  /// Shift adds to the selection, Alt removes from it, none replaces it.
  void selectionDrawn(const QPolygonF& polygon, Qt::KeyboardModifiers modifiers);
  /// The mouse rests on `item` (-1: on no item); `globalPos` is where the mouse is.
  void hovered(std::int64_t item, const QPoint& globalPos);
  /// A click (no drag) on `item` (−1: on empty space), with the keyboard modifiers held.
  void clicked(std::int64_t item, Qt::KeyboardModifiers modifiers);
  /// A frame was drawn (lastFrame() says what it held).
  void frameDrawn();
  /// The camera moved (a drag, the wheel, a fit): what pointed at a place on screen is stale.
  void viewChanged();
  /// Escape was pressed on the map (it takes the keyboard when clicked).
  void escapePressed();
  /// Other items are drawn (a legend group hidden or shown, a range filter).
  void visibleMaskChanged();

protected:
  void initializeGL() override;
  void resizeGL(int w, int h) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

private:
  void rebuildCells();
  void onRenderWindowEvent(vtkObject* caller, unsigned long eventId, void* callData);
  /// The camera's screen axes in world space: right and up (unit vectors).
  struct ScreenAxes {
    double right[3], up[3], focal[3];
  };
  ScreenAxes screenAxes() const;
  /// A point of the map in view-plane coordinates (world units along right and up).
  QPointF onViewPlane(const float* p, const ScreenAxes& axes) const;
  /// View-plane coordinates of a widget point, through the parallel camera.
  QPointF viewPlaneAt(const QPointF& pos) const;
  double worldPerPixel() const;
  /// Moves the camera (focal point and position together) by `dx`, `dy` view-plane units.
  void panBy(double dx, double dy);
  /// The picking grid over view-plane coordinates; rebuilt when the points move or turn.
  void rebuildPickGrid() const;
  void setPoint(std::int64_t item, const float* p, vtkPoints* points) const;
  /// The camera moved under the person's hand: draw the sample until it rests.
  void noteCameraMoving();
  /// Chooses between density and points for the frame about to be drawn (w × h framebuffer
  /// pixels), computes the density image when it is shown, and sets the actors' visibility.
  void prepareFrame(int w, int h);
  ScreenMapping screenMapping(int w, int h) const;
  /// The moving camera's sample (ids, and their positions and colours as VTK poly data).
  void rebuildSample();
  /// Something drawn changed (points, positions, colours, visibility): the density image and,
  /// unless only positions moved, the sample are stale.
  void contentChanged(bool sampleToo);

  vtkGenericOpenGLRenderWindow* m_renderWindow = nullptr;
  vtkRenderer* m_renderer = nullptr;
  vtkRenderer* m_overlayRenderer = nullptr;
  vtkPolyData* m_polyData = nullptr; ///< every point (the normal size's cells)
  vtkActor* m_actor = nullptr;
  /// Other size classes (0, 2, 3): the same points and colours, their own cells and point size.
  vtkPolyData* m_sizedData[4] = {};
  vtkActor* m_sizedActors[4] = {};
  std::vector<std::uint8_t> m_sizeClass;
  vtkPolyData* m_overlayPoints = nullptr;
  vtkActor* m_overlayPointsActor = nullptr;
  vtkPolyData* m_pathLine = nullptr;
  vtkActor* m_pathActor = nullptr;
  vtkPolyData* m_linkLine = nullptr;
  vtkActor* m_linkActor = nullptr;
  std::int64_t m_selected = -1;
  std::vector<std::int32_t> m_neighbours, m_path, m_farLinks;
  bool m_userMoved = false;
  QPointF m_pressPos;
  std::int64_t m_outsideFit = 0; ///< items the last fit left out
  bool m_fitFresh = false;       ///< no camera move since the last fit
  QString m_caption;
  /// How far (Manhattan pixels) the pointer went from m_pressPos while the button was down.
  qreal m_pressTravel = 0;
  void rebuildOverlay();
  bool m_initialized = false;

  std::vector<float> m_positions; ///< n × m_dim
  int m_dim = 2;
  std::vector<bool> m_visible;
  // Picking state, rebuilt lazily (itemAt is const) when the points move or the camera turns.
  mutable PointGrid m_grid; ///< over view-plane coordinates
  mutable bool m_gridStale = true;
  QPointF m_dragStart;
  bool m_dragging = false;
  DragTool m_tool = DragTool::Pan;
  QPolygonF m_drawn; ///< the lasso or rectangle being drawn

  // Density view and level of detail.
  DensityMode m_densityMode = DensityMode::Auto;
  DensityImage m_density;
  vtkImageData* m_densityImage = nullptr;
  vtkActor2D* m_densityActor = nullptr;
  std::int64_t m_visibleCount = 0;
  std::uint64_t m_version = 0; ///< counts changes of what is drawn
  /// What the density image was last computed from; the same again reuses it.
  struct DensityKey {
    std::array<double, 10> mapping{};
    int width = 0, height = 0;
    std::uint64_t version = 0;
    bool sampled = false;
    bool operator==(const DensityKey&) const = default;
  };
  std::optional<DensityKey> m_densityKey;
  std::optional<std::pair<DensityKey, double>> m_shadedFor; ///< the image shown: key, strength
  std::vector<std::int32_t> m_sample;                       ///< sorted ids
  bool m_sampleStale = true, m_samplePositionsStale = true;
  vtkPolyData* m_sampleData = nullptr;
  vtkActor* m_sampleActor = nullptr;
  std::vector<float> m_samplePositions; ///< its positions (dim of the map) and colours
  std::vector<std::uint8_t> m_sampleRgb;
  bool m_moving = false;
  QTimer* m_settle = nullptr;
  Frame m_frame;
};

} // namespace nearscape::ui

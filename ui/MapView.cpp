#include "MapView.h"

#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QWheelEvent>

#include <vtkActor.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkIdTypeArray.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <cmath>

namespace nearscape::ui {

QColor MapView::backgroundColor() { return QColor(250, 250, 248); }
QColor MapView::overlayColor() { return QColor(20, 20, 20); }

MapView::MapView(QWidget* parent) : QOpenGLWidget(parent) {
  setMouseTracking(true);
  setUpdateBehavior(QOpenGLWidget::NoPartialUpdate);
  setMinimumSize(320, 240);

  m_renderWindow = vtkGenericOpenGLRenderWindow::New();
  m_renderer = vtkRenderer::New();
  const QColor bg = backgroundColor();
  m_renderer->SetBackground(bg.redF(), bg.greenF(), bg.blueF());
  m_renderer->GetActiveCamera()->ParallelProjectionOn();
  m_renderWindow->AddRenderer(m_renderer);
  m_renderWindow->SetMultiSamples(0);

  m_polyData = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> mapper;
  mapper->SetInputData(m_polyData);
  mapper->SetScalarModeToUsePointData();
  mapper->SetColorModeToDirectScalars();
  m_actor = vtkActor::New();
  m_actor->SetMapper(mapper);
  m_actor->GetProperty()->SetPointSize(3.0f);
  m_renderer->AddActor(m_actor);

  // Overlays above the points: selection and neighbours as large dots, the path as a line.
  const QColor ov = overlayColor();
  m_overlayPoints = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> overlayMapper;
  overlayMapper->SetInputData(m_overlayPoints);
  m_overlayPointsActor = vtkActor::New();
  m_overlayPointsActor->SetMapper(overlayMapper);
  m_overlayPointsActor->GetProperty()->SetPointSize(7.0f);
  m_overlayPointsActor->GetProperty()->SetColor(ov.redF(), ov.greenF(), ov.blueF());
  m_renderer->AddActor(m_overlayPointsActor);
  m_pathLine = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> pathMapper;
  pathMapper->SetInputData(m_pathLine);
  m_pathActor = vtkActor::New();
  m_pathActor->SetMapper(pathMapper);
  m_pathActor->GetProperty()->SetLineWidth(2.5f);
  m_pathActor->GetProperty()->SetColor(ov.redF(), ov.greenF(), ov.blueF());
  m_renderer->AddActor(m_pathActor);

  // VTK asks its host to make the context current and whether it is; we answer with Qt's.
  vtkNew<vtkCallbackCommand> callback;
  callback->SetClientData(this);
  callback->SetCallback([](vtkObject* caller, unsigned long id, void* client, void* data) {
    static_cast<MapView*>(client)->onRenderWindowEvent(caller, id, data);
  });
  m_renderWindow->AddObserver(vtkCommand::WindowMakeCurrentEvent, callback);
  m_renderWindow->AddObserver(vtkCommand::WindowIsCurrentEvent, callback);
  m_renderWindow->AddObserver(vtkCommand::WindowFrameEvent, callback);
}

MapView::~MapView() {
  makeCurrent();
  if (m_initialized)
    m_renderWindow->Finalize();
  m_renderWindow->RemoveAllObservers();
  doneCurrent();
  m_actor->Delete();
  m_polyData->Delete();
  m_overlayPointsActor->Delete();
  m_overlayPoints->Delete();
  m_pathActor->Delete();
  m_pathLine->Delete();
  m_renderer->Delete();
  m_renderWindow->Delete();
}

void MapView::onRenderWindowEvent(vtkObject*, unsigned long eventId, void* callData) {
  switch (eventId) {
  case vtkCommand::WindowMakeCurrentEvent:
    if (context())
      context()->makeCurrent(context()->surface());
    break;
  case vtkCommand::WindowIsCurrentEvent:
    *static_cast<bool*>(callData) =
        context() && QOpenGLContext::currentContext() == context();
    break;
  case vtkCommand::WindowFrameEvent:
    break; // paintGL blits the frame itself
  default:
    break;
  }
}

void MapView::initializeGL() {
  // VTK renders into its own framebuffers inside Qt's context; it must not own the context nor
  // draw into a hardware buffer of its own.
  m_renderWindow->SetOwnContext(0);
  m_renderWindow->SetFrameBlitModeToNoBlit();
  m_renderWindow->SetReadyForRendering(true);
  m_renderWindow->SetForceMaximumHardwareLineWidth(1);
  m_renderWindow->OpenGLInitContext();
  m_initialized = true;
}

void MapView::resizeGL(int w, int h) {
  const double dpr = devicePixelRatioF();
  m_renderWindow->SetSize(int(w * dpr), int(h * dpr));
}

void MapView::paintGL() {
  if (!m_initialized)
    return;
  const double dpr = devicePixelRatioF();
  const int w = int(width() * dpr), h = int(height() * dpr);
  m_renderWindow->SetSize(w, h);
  m_renderWindow->Render();

  // Rendering may have moved the current context (progress signals...): take ours back, then
  // copy VTK's display framebuffer into the widget's framebuffer.
  makeCurrent();
  QOpenGLExtraFunctions* f = context()->extraFunctions();
  vtkOpenGLState* state = m_renderWindow->GetState();
  state->ResetFramebufferBindings();
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  const GLenum buffer = GL_COLOR_ATTACHMENT0;
  f->glDrawBuffers(1, &buffer);
  f->glDisable(GL_SCISSOR_TEST);
  state->vtkglDisable(GL_SCISSOR_TEST);
  const int* size = m_renderWindow->GetRenderFramebuffer()->GetLastSize();
  m_renderWindow->BlitDisplayFramebuffer(0, 0, 0, size[0], size[1], 0, 0, w, h,
                                         GL_COLOR_BUFFER_BIT, GL_NEAREST);
  // The widget is composited: an alpha other than 1 would let the window behind show through.
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  f->glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
  f->glClearColor(0, 0, 0, 1);
  f->glViewport(0, 0, w, h);
  f->glClear(GL_COLOR_BUFFER_BIT);
  f->glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  state->ResetFramebufferBindings();
}

void MapView::setPoints(const std::vector<float>& xy, const std::vector<std::uint8_t>& rgb) {
  const std::int64_t n = std::int64_t(xy.size() / 2);
  m_xy = xy;
  m_visible.clear();
  vtkNew<vtkPoints> points;
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(n);
  for (std::int64_t i = 0; i < n; ++i)
    points->SetPoint(i, xy[2 * i], xy[2 * i + 1], 0.0);
  vtkNew<vtkUnsignedCharArray> colors;
  colors->SetNumberOfComponents(3);
  colors->SetName("colors");
  colors->SetNumberOfTuples(n);
  std::copy(rgb.begin(), rgb.begin() + std::min<std::size_t>(rgb.size(), std::size_t(3 * n)),
            colors->GetPointer(0));
  m_polyData->SetPoints(points);
  m_polyData->GetPointData()->SetScalars(colors);
  rebuildCells();
  m_grid = PointGrid(MatrixView<float>{m_xy.data(), n, 2});
  m_selected = -1;
  m_neighbours.clear();
  m_path.clear();
  rebuildOverlay();
  m_userMoved = false;
  resetCamera();
}

void MapView::setColors(const std::vector<std::uint8_t>& rgb) {
  auto* colors = vtkUnsignedCharArray::SafeDownCast(m_polyData->GetPointData()->GetScalars());
  if (!colors || rgb.size() != std::size_t(3 * pointCount()))
    return;
  std::copy(rgb.begin(), rgb.end(), colors->GetPointer(0));
  colors->Modified();
  update();
}

void MapView::movePoints(const std::vector<float>& xy, bool fit) {
  const std::int64_t n = pointCount();
  if (std::int64_t(xy.size()) != 2 * n)
    return;
  m_xy = xy;
  vtkPoints* points = m_polyData->GetPoints();
  for (std::int64_t i = 0; i < n; ++i)
    points->SetPoint(i, xy[2 * i], xy[2 * i + 1], 0.0);
  points->Modified();
  m_polyData->Modified();
  m_grid = PointGrid(MatrixView<float>{m_xy.data(), n, 2});
  rebuildOverlay();
  if (fit) {
    resetCamera();
    m_userMoved = false;
  }
  update();
}

void MapView::setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                         const std::vector<std::int32_t>& path) {
  m_selected = selected;
  m_neighbours = neighbours;
  m_path = path;
  rebuildOverlay();
  update();
}

void MapView::rebuildOverlay() {
  vtkNew<vtkPoints> dots;
  vtkNew<vtkCellArray> verts;
  auto addDot = [&](std::int64_t item) {
    if (item < 0 || item >= pointCount())
      return;
    const vtkIdType id = dots->InsertNextPoint(m_xy[2 * item], m_xy[2 * item + 1], 0.01);
    verts->InsertNextCell(1, &id);
  };
  addDot(m_selected);
  for (auto item : m_neighbours)
    addDot(item);
  if (!m_path.empty()) {
    addDot(m_path.front());
    addDot(m_path.back());
  }
  m_overlayPoints->SetPoints(dots);
  m_overlayPoints->SetVerts(verts);
  m_overlayPoints->Modified();

  vtkNew<vtkPoints> linePoints;
  vtkNew<vtkCellArray> lines;
  if (m_path.size() >= 2) {
    std::vector<vtkIdType> ids;
    for (auto item : m_path)
      if (item >= 0 && item < pointCount())
        ids.push_back(linePoints->InsertNextPoint(m_xy[2 * item], m_xy[2 * item + 1], 0.02));
    lines->InsertNextCell(vtkIdType(ids.size()), ids.data());
  }
  m_pathLine->SetPoints(linePoints);
  m_pathLine->SetLines(lines);
  m_pathLine->Modified();
}

void MapView::setVisibleMask(std::vector<bool> visible) {
  m_visible = std::move(visible);
  rebuildCells();
  update();
}

void MapView::rebuildCells() {
  const std::int64_t n = pointCount();
  vtkNew<vtkIdTypeArray> connectivity;
  connectivity->Allocate(n);
  for (std::int64_t i = 0; i < n; ++i)
    if (m_visible.empty() || m_visible[std::size_t(i)])
      connectivity->InsertNextValue(i);
  vtkNew<vtkIdTypeArray> offsets;
  const vtkIdType count = connectivity->GetNumberOfTuples();
  offsets->SetNumberOfTuples(count + 1);
  for (vtkIdType i = 0; i <= count; ++i)
    offsets->SetValue(i, i);
  vtkNew<vtkCellArray> verts;
  verts->SetData(offsets, connectivity);
  m_polyData->SetVerts(verts);
  m_polyData->Modified();
}

void MapView::resetCamera() {
  if (m_xy.empty())
    return;
  float minX = INFINITY, maxX = -INFINITY, minY = INFINITY, maxY = -INFINITY;
  for (std::size_t i = 0; i < m_xy.size(); i += 2) {
    minX = std::min(minX, m_xy[i]);
    maxX = std::max(maxX, m_xy[i]);
    minY = std::min(minY, m_xy[i + 1]);
    maxY = std::max(maxY, m_xy[i + 1]);
  }
  const double cx = 0.5 * (minX + maxX), cy = 0.5 * (minY + maxY);
  const double aspect = double(std::max(width(), 1)) / double(std::max(height(), 1));
  const double halfH = std::max(0.5 * (maxY - minY), 0.5 * (maxX - minX) / aspect);
  vtkCamera* camera = m_renderer->GetActiveCamera();
  camera->SetFocalPoint(cx, cy, 0);
  camera->SetPosition(cx, cy, 1);
  camera->SetViewUp(0, 1, 0);
  camera->SetParallelScale(std::max(halfH * 1.05, 1e-9));
  camera->SetClippingRange(0.5, 1.5);
  update();
}

double MapView::worldPerPixel() const {
  // Parallel scale is half the view's height in world units.
  return 2.0 * m_renderer->GetActiveCamera()->GetParallelScale() / std::max(height(), 1);
}

QPointF MapView::worldAt(const QPointF& pos) const {
  double focal[3];
  m_renderer->GetActiveCamera()->GetFocalPoint(focal);
  const double s = worldPerPixel();
  return {focal[0] + (pos.x() - 0.5 * width()) * s, focal[1] - (pos.y() - 0.5 * height()) * s};
}

QPointF MapView::widgetPosOf(std::int64_t item) const {
  double focal[3];
  m_renderer->GetActiveCamera()->GetFocalPoint(focal);
  const double s = worldPerPixel();
  return {0.5 * width() + (m_xy[2 * item] - focal[0]) / s,
          0.5 * height() - (m_xy[2 * item + 1] - focal[1]) / s};
}

std::int64_t MapView::itemAt(const QPointF& pos) const {
  if (m_grid.empty())
    return -1;
  const QPointF w = worldAt(pos);
  const double radius = 5.0 * worldPerPixel();
  if (m_visible.empty())
    return m_grid.nearest(w.x(), w.y(), radius);
  return m_grid.nearest(w.x(), w.y(), radius,
                        [this](std::int64_t i) { return bool(m_visible[std::size_t(i)]); });
}

void MapView::zoomAt(const QPointF& at, double factor) {
  vtkCamera* camera = m_renderer->GetActiveCamera();
  const QPointF before = worldAt(at);
  camera->SetParallelScale(camera->GetParallelScale() / factor);
  const QPointF after = worldAt(at);
  double focal[3];
  camera->GetFocalPoint(focal);
  const double dx = before.x() - after.x(), dy = before.y() - after.y();
  camera->SetFocalPoint(focal[0] + dx, focal[1] + dy, 0);
  camera->SetPosition(focal[0] + dx, focal[1] + dy, 1);
  m_userMoved = true;
  update();
}

void MapView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
    m_dragging = true;
    m_dragStart = event->position();
    m_pressPos = event->position();
    setCursor(Qt::ClosedHandCursor);
  }
}

void MapView::mouseMoveEvent(QMouseEvent* event) {
  if (m_dragging) {
    const QPointF delta = event->position() - m_dragStart;
    m_dragStart = event->position();
    vtkCamera* camera = m_renderer->GetActiveCamera();
    double focal[3];
    camera->GetFocalPoint(focal);
    const double s = worldPerPixel();
    camera->SetFocalPoint(focal[0] - delta.x() * s, focal[1] + delta.y() * s, 0);
    camera->SetPosition(focal[0] - delta.x() * s, focal[1] + delta.y() * s, 1);
    if (delta.manhattanLength() > 0)
      m_userMoved = true;
    update();
    return;
  }
  emit hovered(itemAt(event->position()), event->globalPosition().toPoint());
}

void MapView::mouseReleaseEvent(QMouseEvent* event) {
  const bool wasDragging = m_dragging;
  m_dragging = false;
  unsetCursor();
  if (wasDragging && event->button() == Qt::LeftButton &&
      (event->position() - m_pressPos).manhattanLength() < 4)
    emit clicked(itemAt(event->position()), event->modifiers());
}

void MapView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  zoomAt(event->position(), std::pow(1.2, steps));
}

void MapView::leaveEvent(QEvent*) { emit hovered(-1, {}); }

} // namespace nearscape::ui

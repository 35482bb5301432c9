#include "MapView.h"

#include "FitBox.h"
#include "StratifiedSample.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QPainter>
#include <QTimer>
#include <QWheelEvent>

#include <vtkActor.h>
#include <vtkActor2D.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkIdTypeArray.h>
#include <vtkImageData.h>
#include <vtkImageMapper.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkTypeInt32Array.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace nearscape::ui {

QColor MapView::backgroundColor() {
  return QColor(250, 250, 248);
}
QColor MapView::overlayColor() {
  return QColor(20, 20, 20);
}

MapView::MapView(QWidget* parent) : QOpenGLWidget(parent) {
  setFocusPolicy(Qt::ClickFocus); // Escape on the map deselects
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
  m_actor->GetProperty()->SetPointSize(kSizeClassPixels[1]);
  m_renderer->AddActor(m_actor);
  for (const int c : {0, 2, 3}) {
    m_sizedData[c] = vtkPolyData::New();
    vtkNew<vtkPolyDataMapper> sized;
    sized->SetInputData(m_sizedData[c]);
    sized->SetScalarModeToUsePointData();
    sized->SetColorModeToDirectScalars();
    m_sizedActors[c] = vtkActor::New();
    m_sizedActors[c]->SetMapper(sized);
    m_sizedActors[c]->GetProperty()->SetPointSize(kSizeClassPixels[c]);
    m_renderer->AddActor(m_sizedActors[c]);
  }
  // While the camera moves: a sample of the points, with positions and colours of its own.
  m_sampleData = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> sampleMapper;
  sampleMapper->SetInputData(m_sampleData);
  sampleMapper->SetScalarModeToUsePointData();
  sampleMapper->SetColorModeToDirectScalars();
  m_sampleActor = vtkActor::New();
  m_sampleActor->SetMapper(sampleMapper);
  m_sampleActor->GetProperty()->SetPointSize(kSizeClassPixels[1]);
  m_sampleActor->VisibilityOff();
  m_renderer->AddActor(m_sampleActor);
  // The density view: an RGB image of the framebuffer's size, drawn instead of the points.
  m_densityImage = vtkImageData::New();
  vtkNew<vtkImageMapper> imageMapper;
  imageMapper->SetInputData(m_densityImage);
  imageMapper->SetColorWindow(255.0); // the bytes as they are
  imageMapper->SetColorLevel(127.5);
  m_densityActor = vtkActor2D::New();
  m_densityActor->SetMapper(imageMapper);
  m_densityActor->SetPosition(0, 0);
  m_densityActor->VisibilityOff();
  m_renderer->AddActor2D(m_densityActor);
  m_settle = new QTimer(this);
  m_settle->setSingleShot(true);
  m_settle->setInterval(kSettleMs);
  connect(m_settle, &QTimer::timeout, this, [this] {
    m_moving = false;
    update();
  });

  // Overlays above the points (a second layer sharing the camera, so that in 3D the path is not
  // hidden inside the cloud): selection and neighbours as large dots, the path as a line.
  m_overlayRenderer = vtkRenderer::New();
  m_overlayRenderer->SetLayer(1);
  m_overlayRenderer->SetActiveCamera(m_renderer->GetActiveCamera());
  m_overlayRenderer->InteractiveOff();
  m_renderWindow->SetNumberOfLayers(2);
  m_renderWindow->AddRenderer(m_overlayRenderer);
  const QColor ov = overlayColor();
  m_overlayPoints = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> overlayMapper;
  overlayMapper->SetInputData(m_overlayPoints);
  m_overlayPointsActor = vtkActor::New();
  m_overlayPointsActor->SetMapper(overlayMapper);
  m_overlayPointsActor->GetProperty()->SetPointSize(7.0f);
  m_overlayPointsActor->GetProperty()->SetColor(ov.redF(), ov.greenF(), ov.blueF());
  m_overlayRenderer->AddActor(m_overlayPointsActor);
  m_pathLine = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> pathMapper;
  pathMapper->SetInputData(m_pathLine);
  m_pathActor = vtkActor::New();
  m_pathActor->SetMapper(pathMapper);
  m_pathActor->GetProperty()->SetLineWidth(2.5f);
  m_pathActor->GetProperty()->SetColor(ov.redF(), ov.greenF(), ov.blueF());
  m_overlayRenderer->AddActor(m_pathActor);
  // Faint lines from the selected item to its true neighbours that the map put far away.
  m_linkLine = vtkPolyData::New();
  vtkNew<vtkPolyDataMapper> linkMapper;
  linkMapper->SetInputData(m_linkLine);
  m_linkActor = vtkActor::New();
  m_linkActor->SetMapper(linkMapper);
  m_linkActor->GetProperty()->SetLineWidth(1.0f);
  m_linkActor->GetProperty()->SetColor(ov.redF(), ov.greenF(), ov.blueF());
  m_linkActor->GetProperty()->SetOpacity(0.45);
  m_overlayRenderer->AddActor(m_linkActor);

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
  for (const int c : {0, 2, 3}) {
    m_sizedActors[c]->Delete();
    m_sizedData[c]->Delete();
  }
  m_sampleActor->Delete();
  m_sampleData->Delete();
  m_densityActor->Delete();
  m_densityImage->Delete();
  m_overlayPointsActor->Delete();
  m_overlayPoints->Delete();
  m_pathActor->Delete();
  m_pathLine->Delete();
  m_linkActor->Delete();
  m_linkLine->Delete();
  m_overlayRenderer->Delete();
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
    *static_cast<bool*>(callData) = context() && QOpenGLContext::currentContext() == context();
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
  prepareFrame(w, h);
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
  m_renderWindow->BlitDisplayFramebuffer(0, 0, 0, size[0], size[1], 0, 0, w, h, GL_COLOR_BUFFER_BIT,
                                         GL_NEAREST);
  // The widget is composited: an alpha other than 1 would let the window behind show through.
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  f->glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
  f->glClearColor(0, 0, 0, 1);
  f->glViewport(0, 0, w, h);
  f->glClear(GL_COLOR_BUFFER_BIT);
  f->glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  state->ResetFramebufferBindings();
  if (!m_caption.isEmpty() || hasOutsideNote()) { // the map's name; what the fit left out
    QPainter painter(this);
    painter.setRenderHint(QPainter::TextAntialiasing);
    auto label = [&painter](const QString& text, const QPoint& at, Qt::Alignment align) {
      QRect r = painter.fontMetrics().boundingRect(text).adjusted(-5, -3, 5, 3);
      r.moveTopLeft(align & Qt::AlignBottom ? at - QPoint(0, r.height()) : at);
      painter.fillRect(r, QColor(255, 255, 255, 215));
      painter.setPen(QColor(60, 60, 60));
      painter.drawText(r, Qt::AlignCenter, text);
    };
    if (!m_caption.isEmpty())
      label(m_caption, QPoint(8, 8), Qt::AlignTop);
    if (hasOutsideNote())
      label(outsideNote(), QPoint(8, height() - 8), Qt::AlignBottom);
  }
  if (m_drawn.size() > 1) { // the lasso or rectangle being drawn, over the map
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(overlayColor(), 1.5, Qt::DashLine));
    painter.setBrush(
        QColor(overlayColor().red(), overlayColor().green(), overlayColor().blue(), 30));
    painter.drawPolygon(m_drawn);
  }
  emit frameDrawn();
}

bool MapView::hasOutsideNote() const {
  return m_outsideFit > 0 && m_fitFresh;
}

QString MapView::outsideNote() const {
  return m_outsideFit == 1
             ? tr("1 item outside the view (far from the rest): zoom out to see it")
             : tr("%L1 items outside the view (far from the rest): zoom out to see them")
                   .arg(m_outsideFit);
}

void MapView::setCaption(const QString& caption) {
  m_caption = caption;
  update();
}

void MapView::setDragTool(DragTool tool) {
  m_tool = tool;
  setCursor(tool == DragTool::Pan ? Qt::ArrowCursor : Qt::CrossCursor);
}

std::vector<std::int64_t> MapView::itemsInside(const QPolygonF& polygon) const {
  std::vector<std::int64_t> inside;
  const QRectF bounds = polygon.boundingRect();
  for (std::int64_t i = 0; i < pointCount(); ++i) {
    if (!m_visible.empty() && !m_visible[std::size_t(i)])
      continue;
    const QPointF p = widgetPosOf(i);
    if (bounds.contains(p) && polygon.containsPoint(p, Qt::OddEvenFill))
      inside.push_back(i);
  }
  return inside;
}

void MapView::setPoint(std::int64_t item, const float* p, vtkPoints* points) const {
  points->SetPoint(item, p[0], p[1], m_dim == 3 ? p[2] : 0.0);
}

void MapView::setPoints(const std::vector<float>& positions, int dim,
                        const std::vector<std::uint8_t>& rgb) {
  m_dim = dim == 3 ? 3 : 2;
  const std::int64_t n = std::int64_t(positions.size()) / m_dim;
  m_positions = positions;
  m_visible.clear();
  m_sizeClass.clear();
  vtkNew<vtkPoints> points;
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(n);
  for (std::int64_t i = 0; i < n; ++i)
    setPoint(i, &positions[std::size_t(i * m_dim)], points);
  vtkNew<vtkUnsignedCharArray> colors;
  colors->SetNumberOfComponents(3);
  colors->SetName("colors");
  colors->SetNumberOfTuples(n);
  std::copy(rgb.begin(), rgb.begin() + std::min<std::size_t>(rgb.size(), std::size_t(3 * n)),
            colors->GetPointer(0));
  m_polyData->SetPoints(points);
  m_polyData->GetPointData()->SetScalars(colors);
  rebuildCells();
  contentChanged(true);
  m_gridStale = true;
  m_selected = -1;
  m_neighbours.clear();
  m_path.clear();
  rebuildOverlay();
  m_userMoved = false;
  vtkCamera* camera = m_renderer->GetActiveCamera();
  camera->SetFocalPoint(0, 0, 0); // looking down −z: the 2D map's view, and 3D's first view
  camera->SetPosition(0, 0, 1);
  camera->SetViewUp(0, 1, 0);
  resetCamera();
}

void MapView::setColors(const std::vector<std::uint8_t>& rgb) {
  auto* colors = vtkUnsignedCharArray::SafeDownCast(m_polyData->GetPointData()->GetScalars());
  if (!colors || rgb.size() != std::size_t(3 * pointCount()))
    return;
  std::copy(rgb.begin(), rgb.end(), colors->GetPointer(0));
  colors->Modified();
  for (const int c : {0, 2, 3})
    m_sizedData[c]->Modified();
  contentChanged(true);
  update();
}

void MapView::setPositions(const std::vector<float>& positions, int dim) {
  const std::int64_t n = pointCount();
  const int newDim = dim == 3 ? 3 : 2;
  if (std::int64_t(positions.size()) != n * newDim)
    return;
  m_dim = newDim;
  vtkCamera* camera = m_renderer->GetActiveCamera();
  camera->SetFocalPoint(0, 0, 0);
  camera->SetPosition(0, 0, 1);
  camera->SetViewUp(0, 1, 0);
  m_positions.clear(); // movePoints checks the size against the new dim
  m_positions.resize(positions.size());
  movePoints(positions, true);
}

void MapView::movePoints(const std::vector<float>& positions, bool fit) {
  const std::int64_t n = pointCount();
  if (std::int64_t(positions.size()) != n * m_dim)
    return;
  m_positions = positions;
  emit viewChanged(); // the points moved under the mouse
  vtkPoints* points = m_polyData->GetPoints();
  for (std::int64_t i = 0; i < n; ++i)
    setPoint(i, &positions[std::size_t(i * m_dim)], points);
  points->Modified();
  m_polyData->Modified();
  for (const int c : {0, 2, 3})
    m_sizedData[c]->Modified();
  contentChanged(false);
  m_gridStale = true;
  rebuildOverlay();
  if (fit) {
    resetCamera();
    m_userMoved = false;
  }
  update();
}

void MapView::setOverlay(std::int64_t selected, const std::vector<std::int32_t>& neighbours,
                         const std::vector<std::int32_t>& path,
                         const std::vector<std::int32_t>& farLinks) {
  m_selected = selected;
  m_neighbours = neighbours;
  m_path = path;
  m_farLinks = farLinks;
  rebuildOverlay();
  update();
}

void MapView::rebuildOverlay() {
  vtkNew<vtkPoints> dots;
  vtkNew<vtkCellArray> verts;
  auto at = [this](std::int64_t item, int c) {
    return c < m_dim ? double(m_positions[std::size_t(item * m_dim + c)]) : 0.0;
  };
  auto addDot = [&](std::int64_t item) {
    if (item < 0 || item >= pointCount())
      return;
    const vtkIdType id = dots->InsertNextPoint(at(item, 0), at(item, 1), at(item, 2));
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
        ids.push_back(linePoints->InsertNextPoint(at(item, 0), at(item, 1), at(item, 2)));
    lines->InsertNextCell(vtkIdType(ids.size()), ids.data());
  }
  m_pathLine->SetPoints(linePoints);
  m_pathLine->SetLines(lines);
  m_pathLine->Modified();

  vtkNew<vtkPoints> linkPoints;
  vtkNew<vtkCellArray> links;
  if (m_selected >= 0 && m_selected < pointCount())
    for (auto item : m_farLinks)
      if (item >= 0 && item < pointCount()) {
        const vtkIdType ends[2] = {
            linkPoints->InsertNextPoint(at(m_selected, 0), at(m_selected, 1), at(m_selected, 2)),
            linkPoints->InsertNextPoint(at(item, 0), at(item, 1), at(item, 2))};
        links->InsertNextCell(2, ends);
      }
  m_linkLine->SetPoints(linkPoints);
  m_linkLine->SetLines(links);
  m_linkLine->Modified();
}

void MapView::setVisibleMask(std::vector<bool> visible) {
  const bool changed = visible != m_visible;
  m_visible = std::move(visible);
  rebuildCells();
  contentChanged(true);
  update();
  if (changed)
    emit visibleMaskChanged();
}

void MapView::setSizeClasses(std::vector<std::uint8_t> classes) {
  m_sizeClass = std::move(classes);
  if (!m_sizeClass.empty() && std::int64_t(m_sizeClass.size()) != pointCount())
    m_sizeClass.clear();
  rebuildCells();
  update();
}

void MapView::setDensityMode(DensityMode mode) {
  m_densityMode = mode;
  m_densityKey.reset();
  m_shadedFor.reset();
  update();
}

void MapView::contentChanged(bool sampleToo) {
  ++m_version;
  m_samplePositionsStale = true;
  if (sampleToo)
    m_sampleStale = true;
}

void MapView::noteCameraMoving() {
  emit viewChanged();
  m_moving = true;
  m_settle->start(); // restarted by every step: the full set returns once the camera rests
}

ScreenMapping MapView::screenMapping(int w, int h) const {
  const ScreenAxes axes = screenAxes();
  ScreenMapping m;
  for (int c = 0; c < 3; ++c) {
    m.right[c] = axes.right[c];
    m.up[c] = axes.up[c];
    m.centreRight += axes.focal[c] * axes.right[c];
    m.centreUp += axes.focal[c] * axes.up[c];
  }
  // The parallel scale is half the view's height in world units.
  m.pixelsPerUnit = h / (2.0 * m_renderer->GetActiveCamera()->GetParallelScale());
  m.width = w;
  m.height = h;
  return m;
}

void MapView::rebuildSample() {
  auto* colors = vtkUnsignedCharArray::SafeDownCast(m_polyData->GetPointData()->GetScalars());
  if (m_sampleStale && colors) {
    m_sample =
        stratifiedSample(colors->GetPointer(0), pointCount(), m_visible, kMovingBudget, 0x5eed);
    m_sampleStale = false;
    m_samplePositionsStale = true;
  }
  if (!m_samplePositionsStale || !colors)
    return;
  const std::size_t m = m_sample.size();
  m_samplePositions.resize(m * std::size_t(m_dim));
  m_sampleRgb.resize(3 * m);
  vtkNew<vtkPoints> points;
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(vtkIdType(m));
  vtkNew<vtkUnsignedCharArray> sampleColors;
  sampleColors->SetNumberOfComponents(3);
  sampleColors->SetNumberOfTuples(vtkIdType(m));
  vtkNew<vtkTypeInt32Array> offsets, connectivity;
  offsets->SetNumberOfTuples(vtkIdType(m + 1));
  connectivity->SetNumberOfTuples(vtkIdType(m));
  const std::uint8_t* rgb = colors->GetPointer(0);
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t i = std::size_t(m_sample[k]);
    const float* p = &m_positions[i * std::size_t(m_dim)];
    std::copy(p, p + m_dim, &m_samplePositions[k * std::size_t(m_dim)]);
    std::copy(rgb + 3 * i, rgb + 3 * i + 3, &m_sampleRgb[3 * k]);
    points->SetPoint(vtkIdType(k), p[0], p[1], m_dim == 3 ? p[2] : 0.0);
    offsets->SetValue(vtkIdType(k), std::int32_t(k));
    connectivity->SetValue(vtkIdType(k), std::int32_t(k));
  }
  offsets->SetValue(vtkIdType(m), std::int32_t(m));
  std::copy(m_sampleRgb.begin(), m_sampleRgb.end(), sampleColors->GetPointer(0));
  vtkNew<vtkCellArray> verts;
  verts->SetData(offsets, connectivity);
  m_sampleData->SetPoints(points);
  m_sampleData->GetPointData()->SetScalars(sampleColors);
  m_sampleData->SetVerts(verts);
  m_sampleData->Modified();
  m_samplePositionsStale = false;
}

void MapView::prepareFrame(int w, int h) {
  const std::int64_t n = pointCount();
  const bool sampled = m_moving && m_visibleCount > kMovingBudget;
  if (sampled)
    rebuildSample();
  const std::int64_t drawn = sampled ? std::int64_t(m_sample.size()) : m_visibleCount;
  auto* colors = vtkUnsignedCharArray::SafeDownCast(m_polyData->GetPointData()->GetScalars());
  const bool measure = colors && n > 0 && w > 0 && h > 0 &&
                       (m_densityMode == DensityMode::On || (m_densityMode == DensityMode::Auto &&
                                                             m_visibleCount >= kDensityMinPoints));
  bool density = false;
  double strength = 0;
  if (measure) {
    const ScreenMapping mapping = screenMapping(w, h);
    const DensityKey key{{mapping.right[0], mapping.right[1], mapping.right[2], mapping.up[0],
                          mapping.up[1], mapping.up[2], mapping.centreRight, mapping.centreUp,
                          mapping.pixelsPerUnit, double(m_dim)},
                         w,
                         h,
                         m_version,
                         sampled};
    if (m_densityKey != key) {
      DensityPoints points;
      points.dim = m_dim;
      if (sampled) {
        points.positions = m_samplePositions.data();
        points.rgb = m_sampleRgb.data();
        points.count = std::int64_t(m_sample.size());
        points.weight = double(m_visibleCount) / double(std::max<std::size_t>(m_sample.size(), 1));
      } else {
        points.positions = m_positions.data();
        points.rgb = colors->GetPointer(0);
        points.count = n;
        points.visible = &m_visible;
      }
      m_density.accumulate(points, mapping, int(kSizeClassPixels[1]));
      m_densityKey = key;
    }
    const double crowding = m_density.crowding();
    // A little hysteresis: a frame at the threshold does not flicker between the two.
    const double from = m_frame.density ? 0.85 * kDensityFrom : kDensityFrom;
    density = m_densityMode == DensityMode::On || crowding >= from;
    const double x =
        std::clamp((crowding - kDensityFrom) / (kDensityFull - kDensityFrom), 0.0, 1.0);
    strength = m_densityMode == DensityMode::On ? 1.0 : x * x * (3 - 2 * x);
    m_frame.crowding = crowding;
  } else {
    m_frame.crowding = 0;
  }
  if (density) {
    int* dims = m_densityImage->GetDimensions();
    if (dims[0] != w || dims[1] != h || !m_densityImage->GetPointData()->GetScalars()) {
      m_densityImage->SetDimensions(w, h, 1);
      m_densityImage->AllocateScalars(VTK_UNSIGNED_CHAR, 3);
      m_shadedFor.reset();
    }
    if (m_shadedFor != std::pair{*m_densityKey, strength}) { // else the image is as it was
      const QColor bg = backgroundColor();
      const std::uint8_t background[3] = {std::uint8_t(bg.red()), std::uint8_t(bg.green()),
                                          std::uint8_t(bg.blue())};
      m_density.shade(background, strength,
                      static_cast<std::uint8_t*>(m_densityImage->GetScalarPointer()));
      m_densityImage->Modified();
      m_shadedFor = std::pair{*m_densityKey, strength};
    }
  }
  m_densityActor->SetVisibility(density);
  m_sampleActor->SetVisibility(!density && sampled);
  m_actor->SetVisibility(!density && !sampled);
  for (const int c : {0, 2, 3})
    m_sizedActors[c]->SetVisibility(!density && !sampled);
  m_frame.density = density;
  m_frame.sampled = sampled;
  m_frame.points = drawn;
  m_frame.strength = density ? strength : 0;
}

void MapView::rebuildCells() {
  // One vertex cell per visible point, in the polydata of its size class; ids in 32 bits
  // (n < 2^31), half of VTK's default.
  const std::int64_t n = pointCount();
  std::int64_t perClass[4] = {};
  m_visibleCount = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (m_visible.empty() || m_visible[std::size_t(i)]) {
      ++perClass[m_sizeClass.empty() ? 1 : std::min<int>(3, m_sizeClass[std::size_t(i)])];
      ++m_visibleCount;
    }
  vtkNew<vtkTypeInt32Array> connectivity[4];
  for (int c = 0; c < 4; ++c)
    connectivity[c]->Allocate(vtkIdType(perClass[c]));
  for (std::int64_t i = 0; i < n; ++i)
    if (m_visible.empty() || m_visible[std::size_t(i)])
      connectivity[m_sizeClass.empty() ? 1 : std::min<int>(3, m_sizeClass[std::size_t(i)])]
          ->InsertNextValue(std::int32_t(i));
  for (int c = 0; c < 4; ++c) {
    vtkPolyData* data = c == 1 ? m_polyData : m_sizedData[c];
    vtkNew<vtkTypeInt32Array> offsets;
    const vtkIdType count = connectivity[c]->GetNumberOfTuples();
    offsets->SetNumberOfTuples(count + 1);
    for (vtkIdType i = 0; i <= count; ++i)
      offsets->SetValue(i, std::int32_t(i));
    vtkNew<vtkCellArray> verts;
    verts->SetData(offsets, connectivity[c]);
    if (c != 1) { // the same points and colours as every other class
      data->SetPoints(m_polyData->GetPoints());
      data->GetPointData()->SetScalars(m_polyData->GetPointData()->GetScalars());
    }
    data->SetVerts(verts);
    data->Modified();
  }
}

void MapView::resetCamera() {
  if (m_positions.empty())
    return;
  // Fit the central percentiles' box (FitBox: one far point does not squash the cloud) as seen
  // through the camera's current orientation; what lies outside is counted on the map.
  const FitBox box = robustFitBox(m_positions, m_dim);
  m_outsideFit = box.outside;
  double lo[3] = {box.lo[0], box.lo[1], box.lo[2]}, hi[3] = {box.hi[0], box.hi[1], box.hi[2]};
  if (m_dim == 2)
    lo[2] = hi[2] = 0;
  vtkCamera* camera = m_renderer->GetActiveCamera();
  double direction[3];
  camera->GetDirectionOfProjection(direction);
  const double centre[3] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
  const double radius =
      0.5 * std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                      (hi[2] - lo[2]) * (hi[2] - lo[2]));
  const double distance = std::max(1.0, 2.0 * radius);
  camera->SetFocalPoint(centre);
  camera->SetPosition(centre[0] - direction[0] * distance, centre[1] - direction[1] * distance,
                      centre[2] - direction[2] * distance);
  camera->SetClippingRange(std::max(1e-6, distance - 1.5 * radius - 1.0),
                           distance + 1.5 * radius + 1.0);
  // The half height that shows the box's extent along the screen's axes.
  const ScreenAxes axes = screenAxes();
  double halfW = 0, halfH = 0;
  for (int corner = 0; corner < 8; ++corner) {
    const double p[3] = {corner & 1 ? hi[0] : lo[0], corner & 2 ? hi[1] : lo[1],
                         corner & 4 ? hi[2] : lo[2]};
    double r = 0, u = 0;
    for (int c = 0; c < 3; ++c) {
      r += (p[c] - centre[c]) * axes.right[c];
      u += (p[c] - centre[c]) * axes.up[c];
    }
    halfW = std::max(halfW, std::abs(r));
    halfH = std::max(halfH, std::abs(u));
  }
  const double aspect = double(std::max(width(), 1)) / double(std::max(height(), 1));
  camera->SetParallelScale(std::max(std::max(halfH, halfW / aspect) * 1.05, 1e-9));
  m_fitFresh = true;
  emit viewChanged();
  update();
}

MapView::ScreenAxes MapView::screenAxes() const {
  vtkCamera* camera = m_renderer->GetActiveCamera();
  ScreenAxes axes;
  double direction[3];
  camera->GetDirectionOfProjection(direction);
  camera->GetViewUp(axes.up);
  camera->GetFocalPoint(axes.focal);
  // right = direction × up
  axes.right[0] = direction[1] * axes.up[2] - direction[2] * axes.up[1];
  axes.right[1] = direction[2] * axes.up[0] - direction[0] * axes.up[2];
  axes.right[2] = direction[0] * axes.up[1] - direction[1] * axes.up[0];
  return axes;
}

QPointF MapView::onViewPlane(const float* p, const ScreenAxes& axes) const {
  double r = 0, u = 0;
  for (int c = 0; c < m_dim; ++c) {
    r += double(p[c]) * axes.right[c];
    u += double(p[c]) * axes.up[c];
  }
  return {r, u};
}

double MapView::worldPerPixel() const {
  // Parallel scale is half the view's height in world units.
  return 2.0 * m_renderer->GetActiveCamera()->GetParallelScale() / std::max(height(), 1);
}

QPointF MapView::viewPlaneAt(const QPointF& pos) const {
  const ScreenAxes axes = screenAxes();
  double r = 0, u = 0;
  for (int c = 0; c < 3; ++c) {
    r += axes.focal[c] * axes.right[c];
    u += axes.focal[c] * axes.up[c];
  }
  const double s = worldPerPixel();
  return {r + (pos.x() - 0.5 * width()) * s, u - (pos.y() - 0.5 * height()) * s};
}

QPointF MapView::widgetPosOf(std::int64_t item) const {
  const ScreenAxes axes = screenAxes();
  const QPointF p = onViewPlane(&m_positions[std::size_t(item * m_dim)], axes);
  const QPointF centre = viewPlaneAt({0.5 * width(), 0.5 * height()});
  const double s = worldPerPixel();
  return {0.5 * width() + (p.x() - centre.x()) / s, 0.5 * height() - (p.y() - centre.y()) / s};
}

void MapView::rebuildPickGrid() const {
  const ScreenAxes axes = screenAxes();
  const std::int64_t n = pointCount();
  std::vector<float> plane(std::size_t(2 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    const QPointF p = onViewPlane(&m_positions[std::size_t(i * m_dim)], axes);
    plane[std::size_t(2 * i)] = float(p.x());
    plane[std::size_t(2 * i + 1)] = float(p.y());
  }
  m_grid = PointGrid(std::move(plane)); // taken over, not copied
  m_gridStale = false;
}

std::int64_t MapView::itemAt(const QPointF& pos) const {
  if (m_positions.empty())
    return -1;
  if (m_gridStale)
    rebuildPickGrid();
  const QPointF w = viewPlaneAt(pos);
  const double radius = 5.0 * worldPerPixel();
  if (m_visible.empty())
    return m_grid.nearest(w.x(), w.y(), radius);
  return m_grid.nearest(w.x(), w.y(), radius,
                        [this](std::int64_t i) { return bool(m_visible[std::size_t(i)]); });
}

MapView::Camera MapView::camera() const {
  vtkCamera* c = m_renderer->GetActiveCamera();
  Camera out;
  c->GetFocalPoint(out.focal.data());
  c->GetPosition(out.position.data());
  c->GetViewUp(out.up.data());
  out.scale = c->GetParallelScale();
  return out;
}

void MapView::setCamera(const Camera& camera) {
  vtkCamera* c = m_renderer->GetActiveCamera();
  c->SetFocalPoint(camera.focal.data());
  c->SetPosition(camera.position.data());
  c->SetViewUp(camera.up.data());
  c->SetParallelScale(std::max(camera.scale, 1e-9));
  m_renderer->ResetCameraClippingRange();
  m_userMoved = true;
  m_fitFresh = false;
  emit viewChanged();
  m_gridStale = true; // the view plane may have turned
  update();
}

void MapView::centreOn(std::int64_t item) {
  if (item < 0 || item >= pointCount())
    return;
  const ScreenAxes axes = screenAxes();
  const QPointF at = onViewPlane(m_positions.data() + item * m_dim, axes);
  const QPointF focal = onViewPlane(
      std::array<float, 3>{float(axes.focal[0]), float(axes.focal[1]), float(axes.focal[2])}.data(),
      axes);
  panBy(at.x() - focal.x(), at.y() - focal.y());
  m_userMoved = true;
  m_fitFresh = false;
  emit viewChanged();
  update();
}

void MapView::panBy(double dx, double dy) {
  vtkCamera* camera = m_renderer->GetActiveCamera();
  const ScreenAxes axes = screenAxes();
  double focal[3], position[3];
  camera->GetFocalPoint(focal);
  camera->GetPosition(position);
  for (int c = 0; c < 3; ++c) {
    const double shift = dx * axes.right[c] + dy * axes.up[c];
    focal[c] += shift;
    position[c] += shift;
  }
  camera->SetFocalPoint(focal);
  camera->SetPosition(position);
}

void MapView::zoomAt(const QPointF& at, double factor) {
  vtkCamera* camera = m_renderer->GetActiveCamera();
  const QPointF before = viewPlaneAt(at);
  camera->SetParallelScale(camera->GetParallelScale() / factor);
  const QPointF after = viewPlaneAt(at);
  panBy(before.x() - after.x(), before.y() - after.y());
  m_userMoved = true;
  m_fitFresh = false;
  update();
}

void MapView::rotateBy(double dx, double dy) {
  if (m_dim != 3)
    return;
  vtkCamera* camera = m_renderer->GetActiveCamera();
  // Half a turn across the widget's width; the view-up stays orthogonal.
  camera->Azimuth(-180.0 * dx / std::max(width(), 1));
  camera->Elevation(180.0 * dy / std::max(height(), 1));
  camera->OrthogonalizeViewUp();
  const double distance = camera->GetDistance();
  camera->SetClippingRange(std::max(1e-6, distance * 0.01), distance * 4);
  m_gridStale = true;
  m_userMoved = true;
  m_fitFresh = false;
  update();
}

void MapView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && m_tool != DragTool::Pan) {
    m_drawn = QPolygonF({event->position()});
    m_pressPos = event->position();
    m_pressTravel = 0;
    return;
  }
  if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
    m_dragging = true;
    m_dragStart = event->position();
    m_pressPos = event->position();
    m_pressTravel = 0;
    setCursor(Qt::ClosedHandCursor);
  }
}

void MapView::mouseMoveEvent(QMouseEvent* event) {
  if (!m_drawn.isEmpty() || m_dragging)
    m_pressTravel = std::max(m_pressTravel, (event->position() - m_pressPos).manhattanLength());
  if (!m_drawn.isEmpty()) {
    if (m_tool == DragTool::Rectangle)
      m_drawn = QPolygonF(QRectF(m_pressPos, event->position()).normalized());
    else
      m_drawn << event->position();
    update();
    return;
  }
  if (m_dragging) {
    const QPointF delta = event->position() - m_dragStart;
    m_dragStart = event->position();
    // 3D: a left drag turns the scene; a middle or Shift+left drag pans, as in 2D.
    const bool pan = m_dim == 2 || (event->buttons() & Qt::MiddleButton) ||
                     (event->modifiers() & Qt::ShiftModifier);
    if (pan) {
      const double s = worldPerPixel();
      panBy(-delta.x() * s, delta.y() * s);
    } else {
      rotateBy(delta.x(), delta.y());
    }
    if (delta.manhattanLength() > 0) {
      m_userMoved = true;
      m_fitFresh = false;
      noteCameraMoving();
    }
    update();
    return;
  }
  emit hovered(itemAt(event->position()), event->globalPosition().toPoint());
}

void MapView::mouseReleaseEvent(QMouseEvent* event) {
  m_pressTravel = std::max(m_pressTravel, (event->position() - m_pressPos).manhattanLength());
  if (!m_drawn.isEmpty() && event->button() == Qt::LeftButton) {
    const QPolygonF drawn = m_drawn;
    m_drawn.clear();
    update();
    // A click is a press that never went far: a lasso closed where it began (how people close
    // loops) ends near its start too, yet is a shape.
    if (m_pressTravel < kClickTravel)
      emit clicked(itemAt(event->position()), event->modifiers());
    else if (drawn.size() > 2 || m_tool == DragTool::Rectangle)
      emit selectionDrawn(drawn, event->modifiers());
    return;
  }
  const bool wasDragging = m_dragging;
  m_dragging = false;
  unsetCursor();
  if (wasDragging && event->button() == Qt::LeftButton && m_pressTravel < kClickTravel)
    emit clicked(itemAt(event->position()), event->modifiers());
}

void MapView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  noteCameraMoving();
  zoomAt(event->position(), std::pow(1.2, steps));
}

void MapView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && !m_drawn.isEmpty()) {
    m_drawn.clear(); // a lasso half drawn is dropped first
    update();
  } else if (event->key() == Qt::Key_Escape) {
    emit escapePressed();
  } else {
    QOpenGLWidget::keyPressEvent(event);
  }
}

void MapView::leaveEvent(QEvent*) {
  emit hovered(-1, {});
}

} // namespace nearscape::ui

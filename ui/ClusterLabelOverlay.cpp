#include "ClusterLabelOverlay.h"

#include "MapView.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace nearscape::ui {

ClusterLabelOverlay::ClusterLabelOverlay(MapView* map) : QWidget(map), m_map(map) {
  setAttribute(Qt::WA_TransparentForMouseEvents); // the map below gets every click and drag
  setAttribute(Qt::WA_NoSystemBackground);
  setGeometry(map->rect());
  map->installEventFilter(this);
  connect(map, &MapView::frameDrawn, this, qOverload<>(&QWidget::update));
  hide();
}

void ClusterLabelOverlay::setLabels(std::shared_ptr<const ClusterLabels> labels, double area) {
  m_labels = std::move(labels);
  m_area = area;
  setVisible(m_labels != nullptr);
  raise();
  update();
}

double ClusterLabelOverlay::robustArea(const std::vector<float>& positions, int dim) {
  if (dim < 1 || positions.size() < std::size_t(dim))
    return 0;
  const std::size_t n = positions.size() / std::size_t(dim);
  std::vector<double> spans;
  std::vector<float> values(n);
  for (int c = 0; c < dim; ++c) {
    for (std::size_t i = 0; i < n; ++i)
      values[i] = positions[i * std::size_t(dim) + std::size_t(c)];
    const auto at = [&](double q) {
      auto it = values.begin() + std::ptrdiff_t(q * double(n - 1));
      std::nth_element(values.begin(), it, values.end());
      return double(*it);
    };
    const double low = at(0.02), high = at(0.98);
    spans.push_back(high - low);
  }
  std::sort(spans.rbegin(), spans.rend());
  return spans.size() == 1 ? spans[0] * spans[0] : spans[0] * spans[1];
}

int ClusterLabelOverlay::levelShown() const {
  if (!m_labels || m_labels->levels.empty())
    return -1;
  const double unitsPerPixel = 2.0 * m_map->camera().scale / std::max(m_map->height(), 1);
  int shown = 0;
  for (std::size_t l = 0; l < m_labels->levels.size(); ++l) {
    const double span = std::sqrt(m_area / std::max(m_labels->levels[l].clusters, 1));
    if (span / unitsPerPixel >= kClusterPixels)
      shown = int(l);
  }
  return shown;
}

QFont ClusterLabelOverlay::fontFor(int level) const {
  QFont f = font();
  f.setBold(true);
  f.setPixelSize(level == 0 ? 15 : 13);
  return f;
}

std::vector<ClusterLabelOverlay::Placed> ClusterLabelOverlay::placedLabels() const {
  std::vector<Placed> placed;
  const int level = levelShown();
  if (level < 0 || m_map->pointCount() == 0)
    return placed;
  const QFontMetricsF metrics(fontFor(level));
  const QRectF inside = QRectF(rect()).adjusted(-2, -2, 2, 2);
  const auto& labels = m_labels->levels[std::size_t(level)].labels;
  for (std::size_t i = 0; i < labels.size(); ++i) { // largest first: it keeps its place
    const ClusterLabel& label = labels[i];
    if (label.words.empty() || label.centreItem >= m_map->pointCount())
      continue;
    QStringList words;
    for (const std::string& w : label.words)
      words << QString::fromStdString(w);
    Placed p;
    p.text = words.join(QStringLiteral(" · "));
    p.anchor = m_map->widgetPosOf(label.centreItem);
    const QSizeF size = metrics.size(Qt::TextSingleLine, p.text) + QSizeF(8, 4); // with the halo
    p.box = QRectF(p.anchor - QPointF(size.width() / 2, size.height() / 2), size);
    p.label = i;
    if (!inside.contains(p.box))
      continue;
    const bool overlaps = std::any_of(placed.begin(), placed.end(),
                                      [&](const Placed& q) { return q.box.intersects(p.box); });
    if (!overlaps)
      placed.push_back(std::move(p));
  }
  return placed;
}

void ClusterLabelOverlay::paintEvent(QPaintEvent*) {
  const std::vector<Placed> placed = placedLabels();
  if (placed.empty())
    return;
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const QFont font = fontFor(levelShown());
  const QFontMetricsF metrics(font);
  // A halo in the map's background colour, then the text: legible over points of any colour.
  QColor halo = MapView::backgroundColor();
  halo.setAlpha(235);
  const QPen haloPen(halo, 4.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
  for (const Placed& p : placed) {
    const QPointF baseline(p.anchor.x() - metrics.horizontalAdvance(p.text) / 2,
                           p.anchor.y() + (metrics.ascent() - metrics.descent()) / 2);
    QPainterPath path;
    path.addText(baseline, font, p.text);
    painter.strokePath(path, haloPen);
    painter.fillPath(path, QColor(25, 25, 35));
  }
}

bool ClusterLabelOverlay::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_map && event->type() == QEvent::Resize)
    setGeometry(m_map->rect());
  return QWidget::eventFilter(watched, event);
}

} // namespace nearscape::ui

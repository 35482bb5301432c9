#include "ParetoPlot.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nearscape::ui {

namespace {
constexpr double kDotRadius = 4.5;
constexpr double kPickRadius = 7.0;
} // namespace

QColor ParetoPlot::frontColor() {
  return QColor(200, 60, 30);
}
QColor ParetoPlot::otherColor() {
  return QColor(90, 110, 160);
}

ParetoPlot::ParetoPlot(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(260, 200);
  setAutoFillBackground(true);
  QPalette p = palette();
  p.setColor(QPalette::Window, Qt::white);
  setPalette(p);
}

void ParetoPlot::clear() {
  m_rows.clear();
  m_front.clear();
  m_chosen = -1;
  updateRanges();
  update();
}

void ParetoPlot::addRow(const SweepRow& row) {
  m_rows.push_back(row);
  m_front = paretoFront(m_rows);
  updateRanges();
  update();
}

void ParetoPlot::setChosen(int index) {
  m_chosen = index >= 0 && index < int(m_rows.size()) ? index : -1;
  update();
}

void ParetoPlot::updateRanges() {
  // Recall from a tenth below the lowest measured (never above 0.9) to 1; QPS over the decades
  // the rows span.
  double lowest = 1, qLo = INFINITY, qHi = 0;
  for (const auto& r : m_rows) {
    lowest = std::min(lowest, r.recall);
    if (r.qps > 0) {
      qLo = std::min(qLo, r.qps);
      qHi = std::max(qHi, r.qps);
    }
  }
  m_recallLo = std::max(0.0, std::min(0.9, std::floor(lowest * 10.0) / 10.0));
  if (qHi <= 0) {
    m_logLo = 0;
    m_logHi = 1;
    return;
  }
  m_logLo = std::floor(std::log10(qLo));
  m_logHi = std::max(m_logLo + 1, std::ceil(std::log10(qHi)));
}

QRectF ParetoPlot::plotArea() const {
  return QRectF(58, 12, std::max(10, width() - 58 - 14), std::max(10, height() - 12 - 40));
}

QPointF ParetoPlot::dotPosition(int index) const {
  const QRectF area = plotArea();
  const SweepRow& r = m_rows[std::size_t(index)];
  const double fx = (r.recall - m_recallLo) / std::max(1e-9, 1.0 - m_recallLo);
  const double fy = (std::log10(std::max(r.qps, 1e-9)) - m_logLo) / (m_logHi - m_logLo);
  return {area.left() + std::clamp(fx, 0.0, 1.0) * area.width(),
          area.bottom() - std::clamp(fy, 0.0, 1.0) * area.height()};
}

int ParetoPlot::rowAt(const QPointF& pos) const {
  int best = -1;
  double bestDistance = kPickRadius;
  for (int i = 0; i < int(m_rows.size()); ++i) {
    const double d = std::hypot(dotPosition(i).x() - pos.x(), dotPosition(i).y() - pos.y());
    if (d <= bestDistance) {
      bestDistance = d;
      best = i;
    }
  }
  return best;
}

void ParetoPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QRectF area = plotArea();
  const QColor grid(225, 225, 225), axis(90, 90, 90);

  // Grid and tick labels: recall every 0.1 (0.02 when zoomed in), QPS every decade.
  p.setFont(font());
  const double span = 1.0 - m_recallLo;
  const double step = span <= 0.2 ? 0.02 : 0.1;
  for (double r = m_recallLo; r <= 1.0 + 1e-9; r += step) {
    const double x = area.left() + (r - m_recallLo) / std::max(1e-9, span) * area.width();
    p.setPen(grid);
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    p.setPen(axis);
    p.drawText(QRectF(x - 25, area.bottom() + 3, 50, 16), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(r, 'f', step < 0.1 ? 2 : 1));
  }
  for (double e = m_logLo; e <= m_logHi + 1e-9; e += 1) {
    const double y = area.bottom() - (e - m_logLo) / (m_logHi - m_logLo) * area.height();
    p.setPen(grid);
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    p.setPen(axis);
    const double value = std::pow(10.0, e);
    const QString label = value >= 1e6   ? QString("%1M").arg(value / 1e6)
                          : value >= 1e3 ? QString("%1k").arg(value / 1e3)
                                         : QString::number(value);
    p.drawText(QRectF(0, y - 8, area.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter, label);
  }
  p.setPen(axis);
  p.drawRect(area);
  p.drawText(QRectF(area.left(), height() - 18, area.width(), 16), Qt::AlignHCenter,
             tr("recall@k"));
  p.save();
  p.translate(12, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-60, -10, 120, 16), Qt::AlignHCenter, tr("queries / s"));
  p.restore();

  if (m_rows.empty()) {
    p.drawText(area, Qt::AlignCenter, tr("Run a sweep: each setting appears here as measured"));
    return;
  }
  // The front as a line through its dots in recall order.
  std::vector<int> onFront;
  for (int i = 0; i < int(m_rows.size()); ++i)
    if (m_front[std::size_t(i)])
      onFront.push_back(i);
  std::sort(onFront.begin(), onFront.end(), [this](int a, int b) {
    return m_rows[std::size_t(a)].recall < m_rows[std::size_t(b)].recall;
  });
  if (onFront.size() >= 2) {
    QPainterPath line(dotPosition(onFront[0]));
    for (std::size_t i = 1; i < onFront.size(); ++i)
      line.lineTo(dotPosition(onFront[i]));
    p.setPen(QPen(frontColor(), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawPath(line);
  }
  for (int i = 0; i < int(m_rows.size()); ++i) {
    const QColor c = m_front[std::size_t(i)] ? frontColor() : otherColor();
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawEllipse(dotPosition(i), kDotRadius, kDotRadius);
  }
  if (m_chosen >= 0) {
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(dotPosition(m_chosen), kDotRadius + 4, kDotRadius + 4);
  }
}

void ParetoPlot::mousePressEvent(QMouseEvent* event) {
  const int row = rowAt(event->position());
  if (row < 0)
    return;
  setChosen(row);
  emit rowChosen(row);
}

void ParetoPlot::mouseMoveEvent(QMouseEvent* event) {
  const int row = rowAt(event->position());
  if (row < 0) {
    QToolTip::hideText();
    return;
  }
  const SweepRow& r = m_rows[std::size_t(row)];
  QToolTip::showText(event->globalPosition().toPoint(),
                     tr("%1\nrecall %2 · %3 queries/s · p50 %4 ms")
                         .arg(QString::fromStdString(formatParameters(r.params)))
                         .arg(r.recall, 0, 'f', 4)
                         .arg(r.qps, 0, 'f', 0)
                         .arg(r.p50Ms, 0, 'f', 3),
                     this);
}

} // namespace nearscape::ui

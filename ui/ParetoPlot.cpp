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

double ParetoPlot::nines(double recall) {
  return -std::log10(std::max(1.0 - recall, std::pow(10.0, -kMaxNines)));
}

void ParetoPlot::updateRanges() {
  // Recall on a "nines" axis (0.9, 0.99, 0.999 evenly spaced, as ann-benchmarks plots it) over
  // the whole nines the rows span; QPS over the decades they span.
  double lowest = kMaxNines, highest = 0, qLo = INFINITY, qHi = 0;
  for (const auto& r : m_rows) {
    lowest = std::min(lowest, nines(r.recall));
    highest = std::max(highest, nines(r.recall));
    if (r.qps > 0) {
      qLo = std::min(qLo, r.qps);
      qHi = std::max(qHi, r.qps);
    }
  }
  m_ninesLo = m_rows.empty() ? 0 : std::floor(lowest);
  m_ninesHi = std::min(kMaxNines, std::max(m_ninesLo + 1, std::ceil(highest)));
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
  const double fx = (nines(r.recall) - m_ninesLo) / (m_ninesHi - m_ninesLo);
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

  // Grid and tick labels: recall at each whole nine (0, 0.9, 0.99 …) with faint lines at the
  // halves between (0.5, 0.95, 0.995 …); QPS every decade.
  p.setFont(font());
  const double span = m_ninesHi - m_ninesLo;
  for (double e = m_ninesLo; e <= m_ninesHi + 1e-9; e += 1) {
    for (const double at : {e, e + std::log10(2.0)}) {
      if (at > m_ninesHi + 1e-9)
        continue;
      const double x = area.left() + (at - m_ninesLo) / span * area.width();
      p.setPen(at == e ? grid : grid.lighter(106));
      p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
      if (at != e && span > 2)
        continue; // the halves' labels only where there is room
      const double recall = 1.0 - std::pow(10.0, -at);
      const int digits = std::max(1, int(std::lround(std::ceil(at - 1e-9))));
      p.setPen(axis);
      const double left = std::min(x - 30, width() - 61.0); // the last label stays inside
      p.drawText(QRectF(left, area.bottom() + 3, 60, 16),
                 (left < x - 30 ? Qt::AlignRight : Qt::AlignHCenter) | Qt::AlignTop,
                 e == 0 && at == e ? QStringLiteral("0") : QString::number(recall, 'f', digits));
    }
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

#include "FacetChart.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace nearscape::ui {
namespace {

constexpr int kTitle = 20;     ///< the title row's height
constexpr int kHistogram = 64; ///< a histogram's plot height
constexpr int kRow = 18;       ///< a value's row height (categorical)
constexpr int kMargin = 6;

const QColor kTotal(200, 200, 205);
const QColor kFiltered(55, 110, 190);
const QColor kSelected(240, 140, 30);

QString number(double v) {
  return QString::number(v, 'g', 4);
}

} // namespace

FacetChart::FacetChart(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setMouseTracking(false);
}

void FacetChart::setCounts(const FacetColumn& /*column: the counts name it*/, FacetCounts counts,
                           std::optional<FacetBrush> brush) {
  m_counts = std::move(counts);
  m_brush = std::move(brush);
  m_dragFrom = m_dragTo = -1;
  setToolTip(m_counts.numeric
                 ? tr("%1: drag across the bars to show only that range on the map (the rest "
                      "dims); click a bar for its bin")
                       .arg(QString::fromStdString(m_counts.column))
                 : tr("%1: click a value to show only it on the map (the rest dims); Ctrl+click "
                      "to add or take away one")
                       .arg(QString::fromStdString(m_counts.column)));
  updateGeometry();
  update();
}

QSize FacetChart::sizeHint() const {
  const int body = m_counts.numeric ? kHistogram + fontMetrics().height() + 4
                                    : kRow * int(m_counts.labels.size()) + 2;
  return {260, kTitle + body + kMargin};
}

QRect FacetChart::plotRect() const {
  const int h = m_counts.numeric ? kHistogram : kRow * int(m_counts.labels.size());
  return QRect(kMargin, kTitle, width() - 2 * kMargin, h);
}

QRect FacetChart::clearRect() const {
  const int w = fontMetrics().horizontalAdvance(tr("clear")) + 8;
  return QRect(width() - kMargin - w, 1, w, kTitle - 2);
}

QRect FacetChart::barRect(int index) const {
  const QRect plot = plotRect();
  const int bars = int(m_counts.total.size());
  if (index < 0 || index >= bars)
    return {};
  if (m_counts.numeric) {
    const int x0 = plot.left() + plot.width() * index / bars;
    const int x1 = plot.left() + plot.width() * (index + 1) / bars;
    return QRect(x0, plot.top(), std::max(1, x1 - x0), plot.height());
  }
  return QRect(plot.left(), plot.top() + index * kRow, plot.width(), kRow);
}

int FacetChart::barAt(QPoint point) const {
  const QRect plot = plotRect();
  const int bars = int(m_counts.total.size());
  if (bars == 0)
    return -1;
  if (m_counts.numeric) {
    const int x = std::clamp(point.x(), plot.left(), plot.right());
    return std::clamp((x - plot.left()) * bars / std::max(1, plot.width()), 0, bars - 1);
  }
  if (!plot.contains(point))
    return -1;
  return std::clamp((point.y() - plot.top()) / kRow, 0, bars - 1);
}

void FacetChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QFontMetrics fm = fontMetrics();
  const QColor text = palette().color(QPalette::WindowText);
  // The title: the column's name (never interpreted: it comes from the metadata), its brush.
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(text);
  QString title = QString::fromStdString(m_counts.column);
  if (m_counts.numeric && m_counts.logBins)
    title += tr(" (log bins)");
  p.drawText(QRect(kMargin, 0, width() - 2 * kMargin - clearRect().width(), kTitle),
             Qt::AlignLeft | Qt::AlignVCenter,
             QFontMetrics(bold).elidedText(title, Qt::ElideRight,
                                           width() - 2 * kMargin - clearRect().width()));
  p.setFont(font());
  if (m_brush) {
    p.setPen(palette().color(QPalette::Link));
    p.drawText(clearRect(), Qt::AlignCenter, tr("clear"));
    p.setPen(text);
  }
  const int bars = int(m_counts.total.size());
  if (bars == 0)
    return;
  const std::int64_t most =
      std::max<std::int64_t>(1, *std::max_element(m_counts.total.begin(), m_counts.total.end()));
  const QRect plot = plotRect();
  if (m_counts.numeric) {
    // The brushed bins (or the drag under way) shaded behind the bars.
    int from = -1, to = -1;
    if (m_dragFrom >= 0) {
      from = std::min(m_dragFrom, m_dragTo), to = std::max(m_dragFrom, m_dragTo);
    } else if (m_brush && m_brush->range) {
      for (int b = 0; b < bars; ++b)
        if (m_counts.edges[std::size_t(b + 1)] > m_brush->range->first &&
            m_counts.edges[std::size_t(b)] <= m_brush->range->second) {
          from = from < 0 ? b : from;
          to = b;
        }
    }
    if (from >= 0)
      p.fillRect(barRect(from).united(barRect(to)), QColor(255, 230, 150, 140));
    for (int b = 0; b < bars; ++b) {
      const QRect r = barRect(b).adjusted(0, 0, -1, 0);
      auto bar = [&](std::int64_t count, const QColor& colour, int inset) {
        if (count <= 0)
          return;
        const int h = std::max(1, int(std::lround(double(count) / most * r.height())));
        p.fillRect(
            QRect(r.left() + inset, r.bottom() - h + 1, std::max(1, r.width() - 2 * inset), h),
            colour);
      };
      bar(m_counts.total[std::size_t(b)], kTotal, 0);
      bar(m_counts.filtered[std::size_t(b)], kFiltered, 0);
      bar(m_counts.selected[std::size_t(b)], kSelected, std::max(1, r.width() / 4));
    }
    p.setPen(text);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    const QRect labels(plot.left(), plot.bottom() + 2, plot.width(), fm.height());
    p.drawText(labels, Qt::AlignLeft, number(m_counts.edges.front()));
    p.drawText(labels, Qt::AlignRight, number(m_counts.edges.back()));
    if (m_brush && m_brush->range) {
      const QString range =
          std::isinf(m_brush->range->first) ? tr("≤ %1").arg(number(m_brush->range->second))
          : std::isinf(m_brush->range->second)
              ? tr("≥ %1").arg(number(m_brush->range->first))
              : tr("%1 … %2").arg(number(m_brush->range->first), number(m_brush->range->second));
      p.drawText(labels, Qt::AlignHCenter, range);
    }
    return;
  }
  // Categorical: one row per value, its label over its bars, the counts at the right.
  for (int b = 0; b < bars; ++b) {
    const QRect r = barRect(b);
    const std::string& value = m_counts.labels[std::size_t(b)];
    const bool other = m_counts.hasOther && b == bars - 1;
    const bool chosen =
        !other && m_brush &&
        std::find(m_brush->values.begin(), m_brush->values.end(), value) != m_brush->values.end();
    if (chosen)
      p.fillRect(r, QColor(255, 230, 150, 140));
    const QRect track = r.adjusted(0, 2, 0, -2);
    auto bar = [&](std::int64_t count, const QColor& colour, int inset) {
      if (count <= 0)
        return;
      const int w = std::max(1, int(std::lround(double(count) / most * track.width())));
      p.fillRect(QRect(track.left(), track.top() + inset, w, track.height() - 2 * inset), colour);
    };
    bar(m_counts.total[std::size_t(b)], kTotal.lighter(108), 0);
    bar(m_counts.filtered[std::size_t(b)], kFiltered.lighter(150), 0);
    bar(m_counts.selected[std::size_t(b)], kSelected, track.height() / 3);
    const QString counts = m_counts.filtered[std::size_t(b)] == m_counts.total[std::size_t(b)]
                               ? QString::number(m_counts.total[std::size_t(b)])
                               : tr("%1 of %2")
                                     .arg(m_counts.filtered[std::size_t(b)])
                                     .arg(m_counts.total[std::size_t(b)]);
    const int countsWidth = fm.horizontalAdvance(counts) + 4;
    p.setPen(other ? palette().color(QPalette::PlaceholderText) : text);
    QFont rowFont = font();
    rowFont.setBold(chosen);
    p.setFont(rowFont);
    p.drawText(r.adjusted(3, 0, -countsWidth, 0), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetrics(rowFont).elidedText(QString::fromStdString(value), Qt::ElideRight,
                                                r.width() - countsWidth - 3));
    p.setFont(font());
    p.drawText(r.adjusted(0, 0, -2, 0), Qt::AlignRight | Qt::AlignVCenter, counts);
  }
}

void FacetChart::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton)
    return;
  if (m_brush && clearRect().contains(event->position().toPoint())) {
    emit brushed(QString::fromStdString(m_counts.column), std::nullopt);
    return;
  }
  if (m_counts.numeric) {
    m_dragFrom = m_dragTo = barAt(event->position().toPoint());
    update();
  }
}

void FacetChart::mouseMoveEvent(QMouseEvent* event) {
  if (m_dragFrom < 0)
    return;
  m_dragTo = barAt(event->position().toPoint());
  update();
}

void FacetChart::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton)
    return;
  const QString column = QString::fromStdString(m_counts.column);
  const int bar = barAt(event->position().toPoint());
  if (m_counts.numeric) {
    if (m_dragFrom < 0)
      return;
    const int from = std::min(m_dragFrom, bar), to = std::max(m_dragFrom, bar);
    m_dragFrom = m_dragTo = -1;
    FacetBrush brush;
    brush.column = m_counts.column;
    brush.range = std::pair{m_counts.edges[std::size_t(from)], m_counts.edges[std::size_t(to + 1)]};
    emit brushed(column, brush);
    return;
  }
  if (bar < 0 || (m_counts.hasOther && bar == int(m_counts.labels.size()) - 1))
    return; // "other" stands for many values: brush them by name
  const std::string& value = m_counts.labels[std::size_t(bar)];
  std::vector<std::string> values = m_brush ? m_brush->values : std::vector<std::string>{};
  const auto found = std::find(values.begin(), values.end(), value);
  if (event->modifiers() & Qt::ControlModifier) {
    if (found != values.end())
      values.erase(found);
    else
      values.push_back(value);
  } else {
    values = values == std::vector<std::string>{value} ? std::vector<std::string>{}
                                                       : std::vector<std::string>{value};
  }
  if (values.empty()) {
    emit brushed(column, std::nullopt);
    return;
  }
  FacetBrush brush;
  brush.column = m_counts.column;
  brush.values = std::move(values);
  emit brushed(column, brush);
}

} // namespace nearscape::ui

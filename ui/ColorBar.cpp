#include "ColorBar.h"

#include "Colouring.h"

#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace nearscape::ui {

ColorBar::ColorBar(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(sizeHint().height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ColorBar::setScale(const QString& name, const ColourScale& scale) {
  m_name = name;
  m_scale = scale;
  m_ticks = scale.ticks();
  const QString kind = QString::fromLatin1(colourScaleName(scale.kind).data());
  QString tip = tr("%1 (%2 scale): %3 … %4; grey: no value")
                    .arg(name, kind)
                    .arg(scale.low, 0, 'g', 6)
                    .arg(scale.high, 0, 'g', 6);
  if (scale.kind == ColourScaleKind::Log)
    tip +=
        tr("; values ≤ %1 (0 and below included) take the lowest colour").arg(scale.low, 0, 'g', 6);
  if (scale.kind == ColourScaleKind::Quantile)
    tip += tr("; each colour step holds as many items (equal values share one colour)");
  setToolTip(tip);
  update();
}

void ColorBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QFontMetrics fm = fontMetrics();
  const int margin = 8, line = fm.height();
  const QString kind = QString::fromLatin1(colourScaleName(m_scale.kind).data());
  // The name is drawn as text, never interpreted (it comes from the metadata file).
  const QString title = tr("%1 · %2").arg(m_name, kind);
  p.drawText(QRect(margin, 2, width() - 2 * margin, line), Qt::AlignLeft | Qt::TextSingleLine,
             fm.elidedText(title, Qt::ElideMiddle, width() - 2 * margin));
  const QRect bar(margin, 4 + line, width() - 2 * margin, 14);
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 10; ++i)
    gradient.setColorAt(i / 10.0, viridis(i / 10.0));
  p.fillRect(bar, gradient);
  const QColor text = palette().color(QPalette::WindowText);
  p.setPen(text);
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  // Ticks where the scale puts their values; a label only where it does not overlap the last.
  int lastRight = -1000;
  for (const ColourScale::Tick& tick : m_ticks) {
    const int x = bar.left() + int(std::lround(tick.position * (bar.width() - 1)));
    p.drawLine(x, bar.bottom() + 1, x, bar.bottom() + 4);
    const QString label = QString::number(tick.value, 'g', 4);
    const int w = fm.horizontalAdvance(label);
    const int left = std::clamp(x - w / 2, 0, width() - w);
    if (left <= lastRight + 6)
      continue;
    p.drawText(QRect(left, bar.bottom() + 5, w, line), Qt::AlignLeft, label);
    lastRight = left + w;
  }
}

} // namespace nearscape::ui

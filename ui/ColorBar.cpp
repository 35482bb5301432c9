#include "ColorBar.h"

#include "Colouring.h"

#include <QLinearGradient>
#include <QPainter>

namespace nearscape::ui {

ColorBar::ColorBar(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(sizeHint().height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ColorBar::setRange(const QString& name, double minimum, double maximum) {
  m_name = name, m_minimum = minimum, m_maximum = maximum;
  setToolTip(
      tr("%1: %2 … %3; grey: no value").arg(name).arg(minimum, 0, 'g', 6).arg(maximum, 0, 'g', 6));
  update();
}

void ColorBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QFontMetrics fm = fontMetrics();
  const int margin = 8, line = fm.height();
  // The name is drawn as text, never interpreted (it comes from the metadata file).
  p.drawText(QRect(margin, 2, width() - 2 * margin, line), Qt::AlignLeft | Qt::TextSingleLine,
             fm.elidedText(m_name, Qt::ElideRight, width() - 2 * margin));
  const QRect bar(margin, 4 + line, width() - 2 * margin, 14);
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 10; ++i)
    gradient.setColorAt(i / 10.0, viridis(i / 10.0));
  p.fillRect(bar, gradient);
  p.setPen(palette().color(QPalette::WindowText));
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  const QRect labels(margin, bar.bottom() + 2, width() - 2 * margin, line);
  p.drawText(labels, Qt::AlignLeft, QString::number(m_minimum, 'g', 5));
  p.drawText(labels, Qt::AlignRight, QString::number(m_maximum, 'g', 5));
}

} // namespace nearscape::ui

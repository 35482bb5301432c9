#include "StudyPlot.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace nearscape::ui {

StudyPlot::StudyPlot(StudyChart::Measure measure, QWidget* parent)
    : QWidget(parent), m_chart(measure) {
  setMouseTracking(true);
  setMinimumSize(360, 240);
  setAutoFillBackground(true);
  QPalette p = palette();
  p.setColor(QPalette::Window, Qt::white);
  setPalette(p);
}

void StudyPlot::setStudy(std::shared_ptr<const SweepStudy> study, std::vector<QColor> colours) {
  m_chart.setStudy(std::move(study), std::move(colours));
  if (!m_chart.drawn(m_hovered.first, m_hovered.second))
    m_hovered = {-1, -1};
  m_chart.setHovered(m_hovered.first, m_hovered.second);
  update();
}

void StudyPlot::setChosen(int run, int row) {
  m_chosen = {run, row};
  m_chart.setChosen(run, row);
  update();
}

const StudyChart& StudyPlot::chart() const {
  m_chart.setRect(QRectF(rect()));
  return m_chart;
}

void StudyPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  chart().paint(p, font());
}

void StudyPlot::mouseMoveEvent(QMouseEvent* event) {
  const auto at = chart().pointAt(event->position());
  if (at != m_hovered) {
    m_hovered = at;
    m_chart.setHovered(at.first, at.second);
    update();
    emit pointHovered(at.first, at.second);
  }
  if (at.first < 0) {
    QToolTip::hideText();
    return;
  }
  const SweepRun& run = m_chart.study()->runs[std::size_t(at.first)];
  QToolTip::showText(event->globalPosition().toPoint(),
                     StudyChart::describe(run, run.rows[std::size_t(at.second)]), this);
}

void StudyPlot::mousePressEvent(QMouseEvent* event) {
  const auto at = chart().pointAt(event->position());
  if (at.first < 0)
    return;
  setChosen(at.first, at.second);
  emit pointChosen(at.first, at.second);
}

void StudyPlot::leaveEvent(QEvent*) {
  if (m_hovered.first >= 0) {
    m_hovered = {-1, -1};
    m_chart.setHovered(-1, -1);
    update();
    emit pointHovered(-1, -1);
  }
}

} // namespace nearscape::ui

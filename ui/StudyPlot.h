#pragma once
// A StudyChart as a widget: the trade-off studio's throughput and latency plots. Hovering a
// point marks it and names it (tooltip and pointHovered); clicking chooses it.

#include "StudyChart.h"

#include <QWidget>

namespace nearscape::ui {

class StudyPlot : public QWidget {
  Q_OBJECT
public:
  explicit StudyPlot(StudyChart::Measure measure, QWidget* parent = nullptr);

  /// The study drawn and each run's colour; redraws.
  void setStudy(std::shared_ptr<const SweepStudy> study, std::vector<QColor> colours);
  /// Rings a point (−1, −1: none).
  void setChosen(int run, int row);
  std::pair<int, int> chosen() const { return m_chosen; }
  /// The chart as laid out for the widget's current size (positions, hit tests).
  const StudyChart& chart() const;

signals:
  /// The point under the mouse changed: (run, row), or (−1, −1).
  void pointHovered(int run, int row);
  /// A point was clicked.
  void pointChosen(int run, int row);

protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

private:
  mutable StudyChart m_chart;
  std::pair<int, int> m_hovered{-1, -1}, m_chosen{-1, -1};
};

} // namespace nearscape::ui

#pragma once
// The recall/QPS plane of an index sweep: each measured setting as a dot (recall across on a
// "nines" axis, −log10(1 − recall), so 0.9, 0.99 and 0.999 lie evenly apart; QPS up on a log
// scale), the Pareto front joined by a line, filled in live as rows arrive. Clicking a dot chooses
// that setting; hovering names it.

#include "nearscape/index/Sweep.h"

#include <QWidget>

#include <vector>

namespace nearscape::ui {

class ParetoPlot : public QWidget {
  Q_OBJECT
public:
  explicit ParetoPlot(QWidget* parent = nullptr);

  void clear();
  /// Adds one measured setting and redraws (the front is recomputed over all rows).
  void addRow(const SweepRow& row);
  const std::vector<SweepRow>& rows() const { return m_rows; }
  /// Rows on the front, by paretoFront over the rows so far.
  const std::vector<bool>& front() const { return m_front; }
  /// Rings row `index` (−1: none).
  void setChosen(int index);
  int chosen() const { return m_chosen; }
  /// Widget position of row `index`'s dot.
  QPointF dotPosition(int index) const;
  /// The row whose dot lies within a few pixels of `pos`, or −1.
  int rowAt(const QPointF& pos) const;
  /// Colours of dots on and off the front (what a grab shows).
  static QColor frontColor();
  static QColor otherColor();
  /// The recall axis's coordinate: −log10(1 − recall), recall 1 drawn at kMaxNines.
  static double nines(double recall);
  static constexpr double kMaxNines = 4;

signals:
  void rowChosen(int index);

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  QRectF plotArea() const;
  /// The axes' ranges: nines [m_ninesLo, m_ninesHi], log10 QPS [m_logLo, m_logHi].
  void updateRanges();

  std::vector<SweepRow> m_rows;
  std::vector<bool> m_front;
  int m_chosen = -1;
  double m_ninesLo = 0, m_ninesHi = 1, m_logLo = 0, m_logHi = 1;
};

} // namespace nearscape::ui

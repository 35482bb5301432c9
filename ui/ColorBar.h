#pragma once
// The key of a numeric colouring: the column's name and scale, the colour map from the scale's
// low end to its high end, and ticks at the values the scale puts there (a log or quantile
// scale's ticks are not evenly spaced in value, and the bar says so).

#include "ColourScale.h"

#include <QWidget>

#include <vector>

namespace nearscape::ui {

class ColorBar : public QWidget {
  Q_OBJECT
public:
  explicit ColorBar(QWidget* parent = nullptr);
  /// Shows `name` coloured on `scale`.
  void setScale(const QString& name, const ColourScale& scale);
  QString name() const { return m_name; }
  double minimum() const { return m_scale.low; }
  double maximum() const { return m_scale.high; }
  const ColourScale& scale() const { return m_scale; }
  /// The ticks drawn (value and position along the bar, 0 … 1).
  const std::vector<ColourScale::Tick>& ticks() const { return m_ticks; }
  QSize sizeHint() const override { return {240, 64}; }

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  QString m_name;
  ColourScale m_scale;
  std::vector<ColourScale::Tick> m_ticks;
};

} // namespace nearscape::ui

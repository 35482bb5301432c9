#pragma once
// The key of a numeric colouring: the column's name, the colour map from its minimum to its
// maximum, and the two values.

#include <QWidget>

namespace nearscape::ui {

class ColorBar : public QWidget {
  Q_OBJECT
public:
  explicit ColorBar(QWidget* parent = nullptr);
  /// Shows `name` coloured from `minimum` to `maximum`.
  void setRange(const QString& name, double minimum, double maximum);
  QString name() const { return m_name; }
  double minimum() const { return m_minimum; }
  double maximum() const { return m_maximum; }
  QSize sizeHint() const override { return {240, 58}; }

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  QString m_name;
  double m_minimum = 0, m_maximum = 1;
};

} // namespace nearscape::ui

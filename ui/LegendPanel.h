#pragma once
// The legend: one entry per label with its colour and count; unchecking an entry hides that
// class in the map, double-clicking shows that class alone.

#include <QColor>
#include <QListWidget>

#include <string>
#include <vector>

namespace nearscape::ui {

class LegendPanel : public QListWidget {
  Q_OBJECT
public:
  explicit LegendPanel(QWidget* parent = nullptr);

  /// Fills the legend; counts[i] items carry names[i], drawn in colors[i] (default: the label
  /// palette).
  void setLabels(const std::vector<std::string>& names, const std::vector<qint64>& counts,
                 const std::vector<QColor>& colors = {});
  /// Which labels are checked, one flag per label.
  std::vector<bool> visibleLabels() const;
  /// Checks or unchecks label `index` (as a click on its box would).
  void setLabelVisible(int index, bool visible);

signals:
  void visibilityChanged();

private:
  bool m_filling = false;
};

} // namespace nearscape::ui

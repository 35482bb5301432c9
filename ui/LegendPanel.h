#pragma once
// The legend: one entry per label with its colour and count; unchecking an entry hides that
// class in the map, double-clicking shows that class alone. A long legend is searched by name.

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
  /// palette). A long name is shown cut to a line (its tooltip holds more; the search reads it
  /// all): the list lays each entry's text out again at every repaint.
  void setLabels(const std::vector<std::string>& names, const std::vector<qint64>& counts,
                 const std::vector<QColor>& colors = {});
  /// Which labels are checked, one flag per label.
  std::vector<bool> visibleLabels() const;
  /// Checks or unchecks label `index` (as a click on its box would).
  void setLabelVisible(int index, bool visible);
  /// Lists only the entries whose name contains `text` (any case; empty: all): a long legend
  /// searched by name. Nothing is hidden on the map until asked (showOnlyListed).
  void setFilterText(const QString& text);
  /// Checks the entries listed and unchecks the rest: the map shows what the search found.
  void showOnlyListed();
  /// Entries listed now (not filtered out by setFilterText).
  int listedCount() const;

signals:
  void visibilityChanged();

private:
  bool m_filling = false;
  std::vector<QString> m_names; ///< each entry's name, for the search
};

} // namespace nearscape::ui

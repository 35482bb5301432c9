#pragma once
// One facet of the Facets dock: a numeric column's histogram (drag across it to brush a range,
// click a bar for its bin) or a categorical column's values by count (click one to brush it,
// Ctrl+click to add or take away one). Three series overlaid: every item (grey), the items
// passing the other facets' brushes (blue), and the selection among them (orange).

#include "nearscape/core/Facets.h"

#include <QWidget>

#include <optional>

namespace nearscape::ui {

class FacetChart : public QWidget {
  Q_OBJECT
public:
  explicit FacetChart(QWidget* parent = nullptr);

  /// Shows `counts` of `column`, with `brush` (none: the column is not brushed).
  void setCounts(const FacetColumn& column, FacetCounts counts, std::optional<FacetBrush> brush);
  const FacetCounts& counts() const { return m_counts; }
  const std::optional<FacetBrush>& brush() const { return m_brush; }
  /// Where bar `index` (a bin or a value's row) is drawn, in this widget's coordinates: for
  /// tests and for a person's pointer alike.
  QRect barRect(int index) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return {160, sizeHint().height()}; }

signals:
  /// A person brushed (or, with none, cleared) this facet.
  void brushed(const QString& column, const std::optional<FacetBrush>& brush);

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

private:
  int barAt(QPoint point) const;
  QRect plotRect() const;
  QRect clearRect() const;

  FacetCounts m_counts;
  std::optional<FacetBrush> m_brush;
  int m_dragFrom = -1, m_dragTo = -1; ///< numeric: the bins a drag spans
};

} // namespace nearscape::ui

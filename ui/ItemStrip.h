#pragma once
// A row of items (thumbnail or text, label, a caption such as a distance): the neighbours of the
// selected item, or the steps of a path.

#include "nearscape/core/Dataset.h"

#include <QPointer>

#include <QListWidget>

namespace nearscape::ui {

class Thumbnailer;

class ItemStrip : public QListWidget {
  Q_OBJECT
public:
  /// `horizontal`: items flow left to right (a path strip); else top to bottom (a list).
  explicit ItemStrip(bool horizontal, QWidget* parent = nullptr);
  /// Shows `ids` of `dataset`, each with its caption (same length, may be empty strings);
  /// `emphasised` items are drawn in bold (the path's bottleneck).
  void setItems(const Dataset& dataset, const std::vector<std::int32_t>& ids,
                const std::vector<QString>& captions, const std::vector<bool>& emphasised = {});
  /// The item shown at row `row`.
  std::int32_t itemAt(int row) const;
  /// Where thumbnails come from; rows update as their thumbnails arrive.
  void setThumbnailer(Thumbnailer* thumbnailer);
  /// The metadata column that names items beside `#id` (−1: none); rows set later use it.
  void setTitleColumn(int column) { m_titleColumn = column; }

private:
  QPointer<Thumbnailer> m_thumbnailer;
  int m_titleColumn = -1;

signals:
  /// The person activated (double-clicked) an item.
  void itemChosen(std::int32_t item);
};

} // namespace nearscape::ui

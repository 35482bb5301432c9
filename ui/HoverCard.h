#pragma once
// The card that follows the mouse over the map: an item's `#id` and title, its thumbnail, and
// every metadata column with its name.

#include "nearscape/core/Dataset.h"

#include <QFrame>

class QLabel;

namespace nearscape::ui {

class HoverCard : public QFrame {
  Q_OBJECT
public:
  explicit HoverCard(QWidget* parent = nullptr);
  /// Fills the card for `item` of `dataset`, with `thumbnail` (or none when null), and shows it
  /// near `globalPos`.
  void showItem(const Dataset& dataset, std::int64_t item, const QImage& thumbnail,
                const QPoint& globalPos);
  /// The item shown (-1 before the first).
  std::int64_t item() const { return m_item; }
  /// Replaces the thumbnail of the item shown (one that arrived after the card opened).
  void setThumbnail(const QImage& thumbnail);
  /// What the card says (for tests and accessibility).
  QString text() const;
  /// The thumbnail shown, or a null pixmap.
  QPixmap thumbnail() const;
  /// The metadata column that names items beside `#id` (−1: none), for cards shown later.
  void setTitleColumn(int column) { m_titleColumn = column; }
  /// Columns listed at most; the rest are counted.
  static constexpr int kMaxColumns = 24;

private:
  QLabel* m_image;
  QLabel* m_text;
  std::int64_t m_item = -1;
  int m_titleColumn = -1;
};

} // namespace nearscape::ui

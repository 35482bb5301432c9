#pragma once
// The card that follows the mouse over the map: an item's id, label, thumbnail or text.

#include "nearscape/core/Dataset.h"

#include <QFrame>

class QLabel;

namespace nearscape::ui {

class HoverCard : public QFrame {
  Q_OBJECT
public:
  explicit HoverCard(QWidget* parent = nullptr);
  /// Fills the card for `item` of `dataset` and shows it near `globalPos`.
  void showItem(const Dataset& dataset, std::int64_t item, const QPoint& globalPos);
  /// What the card says (for tests and accessibility).
  QString text() const;
  /// The thumbnail shown, or a null pixmap.
  QPixmap thumbnail() const;

private:
  QLabel* m_image;
  QLabel* m_text;
};

} // namespace nearscape::ui

#include "ItemStrip.h"

#include "Thumbnailer.h"

#include "nearscape/core/TitleColumn.h"

#include <QIcon>
#include <QImage>
#include <QPixmap>

namespace nearscape::ui {

ItemStrip::ItemStrip(bool horizontal, QWidget* parent) : QListWidget(parent) {
  setIconSize(QSize(56, 56));
  if (horizontal) {
    setViewMode(QListView::IconMode);
    setFlow(QListView::LeftToRight);
    setWrapping(false);
    setMovement(QListView::Static);
    setMinimumHeight(120);
  }
  setUniformItemSizes(horizontal);
  connect(this, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* it) { emit itemChosen(it->data(Qt::UserRole).toInt()); });
}

void ItemStrip::setItems(const Dataset& dataset, const std::vector<std::int32_t>& ids,
                         const std::vector<QString>& captions,
                         const std::vector<bool>& emphasised) {
  clear();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int32_t id = ids[i];
    QString text = QStringLiteral("#%1").arg(id);
    const std::string title = titleOf(dataset, m_titleColumn, id);
    if (!title.empty())
      text += QStringLiteral(" ") + QString::fromStdString(title).left(60);
    const std::string label = dataset.labelOf(id);
    if (!label.empty())
      text += (title.empty() ? QStringLiteral(" ") : QStringLiteral(" · ")) +
              QString::fromStdString(label).left(60); // a row re-lays its text out at each paint
    if (i < captions.size() && !captions[i].isEmpty())
      text += QStringLiteral("\n") + captions[i];
    // The text column once, when it is not the title itself.
    std::string body = m_titleColumn == dataset.textColumn ? std::string() : dataset.textOf(id);
    if (!body.empty()) {
      if (body.size() > 90)
        body = body.substr(0, 90) + "…";
      text += QStringLiteral("\n") + QString::fromStdString(body);
    }
    const QIcon icon =
        m_thumbnailer ? iconOf(m_thumbnailer->thumbnail(id), iconSize().width()) : QIcon();
    auto* entry = new QListWidgetItem(icon, text, this);
    entry->setData(Qt::UserRole, id);
    if (i < emphasised.size() && emphasised[i]) {
      QFont f = entry->font();
      f.setBold(true);
      entry->setFont(f);
    }
  }
}

void ItemStrip::setThumbnailer(Thumbnailer* thumbnailer) {
  if (m_thumbnailer)
    disconnect(m_thumbnailer, nullptr, this, nullptr);
  m_thumbnailer = thumbnailer;
  if (!thumbnailer)
    return;
  connect(thumbnailer, &Thumbnailer::thumbnailReady, this, [this](qint64 ready) {
    for (int row = 0; row < count(); ++row)
      if (item(row)->data(Qt::UserRole).toLongLong() == ready)
        item(row)->setIcon(iconOf(m_thumbnailer->thumbnail(ready), iconSize().width()));
  });
}

std::int32_t ItemStrip::itemAt(int row) const {
  return row >= 0 && row < count() ? item(row)->data(Qt::UserRole).toInt() : -1;
}

} // namespace nearscape::ui

#include "HoverCard.h"

#include <QImage>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace nearscape::ui {

HoverCard::HoverCard(QWidget* parent)
    : QFrame(parent, Qt::ToolTip | Qt::FramelessWindowHint), m_image(new QLabel(this)),
      m_text(new QLabel(this)) {
  setFrameShape(QFrame::Box);
  setAttribute(Qt::WA_ShowWithoutActivating);
  setAutoFillBackground(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(m_image, 0, Qt::AlignHCenter);
  layout->addWidget(m_text);
  m_text->setWordWrap(true);
  m_text->setTextFormat(Qt::PlainText);
  m_text->setMaximumWidth(320);
}

void HoverCard::showItem(const Dataset& dataset, std::int64_t item, const QImage& thumbnail,
                         const QPoint& globalPos) {
  m_item = item;
  QString text = tr("item %1").arg(item);
  const std::string label = dataset.labelOf(item);
  if (!label.empty())
    text += QStringLiteral("\n") + tr("label: %1").arg(QString::fromStdString(label));
  std::string body = dataset.textOf(item);
  if (body.size() > 400)
    body = body.substr(0, 400) + "…";
  if (!body.empty())
    text += QStringLiteral("\n") + QString::fromStdString(body);
  m_text->setText(text);

  setThumbnail(thumbnail);
  move(globalPos + QPoint(16, 16));
  show();
}

void HoverCard::setThumbnail(const QImage& thumbnail) {
  if (thumbnail.isNull()) {
    m_image->clear();
    m_image->hide();
  } else {
    // Small images (IDX's 28 × 28) are enlarged with sharp pixels; larger ones fit 128 pixels.
    const int side = std::max(thumbnail.width(), thumbnail.height());
    const double scale = side < 64 ? 4.0 : std::min(1.0, 128.0 / side);
    m_image->setPixmap(QPixmap::fromImage(thumbnail.scaled(
        int(thumbnail.width() * scale), int(thumbnail.height() * scale), Qt::KeepAspectRatio,
        side < 64 ? Qt::FastTransformation : Qt::SmoothTransformation)));
    m_image->show();
  }
  adjustSize();
}

QString HoverCard::text() const {
  return m_text->text();
}

QPixmap HoverCard::thumbnail() const {
  return m_image->pixmap();
}

} // namespace nearscape::ui

#include "HoverCard.h"

#include <QImage>
#include <QLabel>
#include <QVBoxLayout>

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

void HoverCard::showItem(const Dataset& dataset, std::int64_t item, const QPoint& globalPos) {
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

  const Thumbnails& thumbs = dataset.thumbnails;
  if (!thumbs.empty() && item < thumbs.pixels.rows()) {
    const QImage::Format format =
        thumbs.channels == 3 ? QImage::Format_RGB888 : QImage::Format_Grayscale8;
    const QImage image(thumbs.image(item), thumbs.width, thumbs.height,
                       thumbs.width * thumbs.channels, format);
    m_image->setPixmap(QPixmap::fromImage(image.scaled(
        thumbs.width * 4, thumbs.height * 4, Qt::KeepAspectRatio, Qt::FastTransformation)));
    m_image->show();
  } else {
    m_image->clear();
    m_image->hide();
  }
  adjustSize();
  move(globalPos + QPoint(16, 16));
  show();
}

QString HoverCard::text() const {
  return m_text->text();
}

QPixmap HoverCard::thumbnail() const {
  return m_image->pixmap();
}

} // namespace nearscape::ui

#include "HoverCard.h"

#include "nearscape/core/TitleColumn.h"

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
  auto cut = [](const std::string& value, int chars) {
    const QString v = QString::fromStdString(value);
    return v.size() <= chars ? v : v.left(chars) + QStringLiteral("…");
  };
  QString text = QStringLiteral("#%1").arg(item);
  if (const std::string title = titleOf(dataset, m_titleColumn, item); !title.empty())
    text += QStringLiteral(" ") + cut(title, 80);
  const Metadata& metadata = dataset.metadata;
  const int columns = int(metadata.columns.size());
  if (item < metadata.rows()) {
    // Every column with its name: a bare value ("0.702") says nothing.
    for (int c = 0; c < std::min(columns, kMaxColumns); ++c)
      text += QStringLiteral("\n%1: %2")
                  .arg(QString::fromStdString(metadata.columnNames[std::size_t(c)]),
                       cut(metadata.columns[std::size_t(c)][std::size_t(item)],
                           c == dataset.textColumn ? 300 : 100));
    if (columns > kMaxColumns)
      text += QStringLiteral("\n") + tr("… %n more column(s)", "", columns - kMaxColumns);
  } else if (const std::string label = dataset.labelOf(item); !label.empty()) {
    text += QStringLiteral("\n") + tr("label: %1").arg(cut(label, 100));
  }
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

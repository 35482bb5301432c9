#include "LegendPanel.h"

#include "Colors.h"

#include <QPainter>
#include <QPixmap>

namespace nearscape::ui {
namespace {
constexpr qsizetype kShownChars = 80; ///< of a name, in its entry
constexpr qsizetype kTipChars = 500;  ///< of a long name, in its entry's tooltip
} // namespace

LegendPanel::LegendPanel(QWidget* parent) : QListWidget(parent) {
  setMinimumWidth(180);
  setToolTip(tr("Uncheck a class to hide it; double-click to show it alone"));
  connect(this, &QListWidget::itemChanged, this, [this] {
    if (!m_filling)
      emit visibilityChanged();
  });
  connect(this, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* solo) {
    m_filling = true;
    for (int i = 0; i < count(); ++i)
      item(i)->setCheckState(item(i) == solo ? Qt::Checked : Qt::Unchecked);
    m_filling = false;
    emit visibilityChanged();
  });
}

void LegendPanel::setLabels(const std::vector<std::string>& names,
                            const std::vector<qint64>& counts, const std::vector<QColor>& colors) {
  m_filling = true;
  clear();
  m_names.clear();
  for (std::size_t i = 0; i < names.size(); ++i) {
    m_names.push_back(QString::fromStdString(names[i]));
    QPixmap swatch(14, 14);
    swatch.fill(Qt::transparent);
    QPainter painter(&swatch);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setBrush(i < colors.size() ? colors[i] : labelColor(int(i)));
    painter.setPen(Qt::NoPen);
    painter.drawEllipse(1, 1, 12, 12);
    painter.end();
    // A name is shown cut to a line's worth (kShownChars): the list lays out and paints each
    // entry's whole text on every repaint, and 20 values of 10 KB each stalled the window for
    // 200-300 ms at each one. The search still looks through the whole name.
    const QString& name = m_names.back();
    const QString shown = name.size() > kShownChars ? name.left(kShownChars) + QChar(0x2026) : name;
    auto* entry = new QListWidgetItem(
        QIcon(swatch), QStringLiteral("%1  (%2)").arg(shown).arg(i < counts.size() ? counts[i] : 0),
        this);
    if (shown.size() != name.size())
      entry->setToolTip(name.left(kTipChars) +
                        (name.size() > kTipChars ? QString(QChar(0x2026)) : QString()));
    entry->setFlags(entry->flags() | Qt::ItemIsUserCheckable);
    entry->setCheckState(Qt::Checked);
  }
  m_filling = false;
}

std::vector<bool> LegendPanel::visibleLabels() const {
  std::vector<bool> visible(static_cast<std::size_t>(count()), false);
  for (int i = 0; i < count(); ++i)
    visible[std::size_t(i)] = item(i)->checkState() == Qt::Checked;
  return visible;
}

void LegendPanel::setLabelVisible(int index, bool visible) {
  if (index >= 0 && index < count())
    item(index)->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
}

void LegendPanel::setFilterText(const QString& text) {
  for (int i = 0; i < count(); ++i)
    setRowHidden(i, !text.isEmpty() && std::size_t(i) < m_names.size() &&
                        !m_names[std::size_t(i)].contains(text, Qt::CaseInsensitive));
}

void LegendPanel::showOnlyListed() {
  m_filling = true;
  for (int i = 0; i < count(); ++i)
    item(i)->setCheckState(isRowHidden(i) ? Qt::Unchecked : Qt::Checked);
  m_filling = false;
  emit visibilityChanged();
}

int LegendPanel::listedCount() const {
  int listed = 0;
  for (int i = 0; i < count(); ++i)
    listed += isRowHidden(i) ? 0 : 1;
  return listed;
}

} // namespace nearscape::ui
